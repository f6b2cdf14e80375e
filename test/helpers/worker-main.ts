// A worker process for tests: configuration from the environment, as in production.
import { loadConfig } from "../../src/config.js";
import { closeOnSignals, startWorkerService } from "../../src/main.js";

const config = loadConfig(process.env);
const service = await startWorkerService(config);
closeOnSignals(service, service.logger);
process.stdout.write("ready\n");
