import { collectDefaultMetrics, Registry } from "prom-client";
import type { Config } from "./config.js";
import { createLogger, type Logger } from "./logger.js";
import { type RunningWorkers, startWorkers } from "./processors/start-workers.js";
import { createRedis } from "./redis-connection.js";
import { checkRedisSafety } from "./redis-safety.js";

export interface WorkerService {
  readonly workers: RunningWorkers;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Workers first (drain within the grace period), then Redis. Idempotent; every step runs. */
  close(): Promise<void>;
}

/** Refused start: Redis may lose jobs and MONEYQ_REQUIRE_SAFE_REDIS is set. */
export class UnsafeRedisError extends Error {
  readonly code = "unsafe_redis";
}

/** Composes a worker process from configuration. */
export async function startWorkerService(
  config: Config,
  logger: Logger = createLogger(config.logLevel),
): Promise<WorkerService> {
  const connection = createRedis(config.redisUrl);
  try {
    const safety = await checkRedisSafety(connection);
    for (const warning of safety.warnings)
      logger.warn({ redis: config.redisUrl.replace(/\/\/[^@]*@/, "//***@") }, warning);
    if (!safety.safe && config.requireSafeRedis) {
      throw new UnsafeRedisError(
        `refusing to start (MONEYQ_REQUIRE_SAFE_REDIS): ${safety.warnings.join("; ")}`,
      );
    }
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: "moneyq_" });
    const workers = await startWorkers({ config, connection, logger, registry });
    let closing: Promise<void> | undefined;
    return {
      workers,
      registry,
      logger,
      close() {
        closing ??= (async () => {
          await workers
            .close()
            .catch((error: unknown) =>
              logger.error({ err: String(error) }, "closing workers failed"),
            );
          await connection.quit().catch(() => connection.disconnect());
        })();
        return closing;
      },
    };
  } catch (error) {
    connection.disconnect();
    throw error;
  }
}

/** On SIGTERM or SIGINT: close, then exit 0 (1 if closing failed). */
export function closeOnSignals(service: { close(): Promise<void> }, logger: Logger): void {
  const stop = (signal: string) => {
    logger.info({ signal }, "shutting down");
    service.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}
