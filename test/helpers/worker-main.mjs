// A worker process for tests: configuration from the environment, as in production.
import { loadConfig } from "../../src/config.js";
import { closeOnSignals, startService } from "../../src/main.js";

const config = loadConfig(process.env);
const service = await startService({ config, role: "worker" });
closeOnSignals(service, service.logger);
process.stdout.write("ready\n");
