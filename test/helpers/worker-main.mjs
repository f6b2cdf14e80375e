// A worker process for tests: configuration from the environment, as in production. Plain
// JavaScript on dist/, so that it starts as fast as the installed service does.
import { loadConfig } from "../../dist/config/load-config.js";
import { closeOnSignals, startService } from "../../dist/service/start-service.js";

const config = loadConfig(process.env);
const service = await startService({ config, role: "worker" });
closeOnSignals(service, service.logger, config.pipeline.shutdownGraceMs);
process.stdout.write(`ready ${service.metricsUrl}\n`);
