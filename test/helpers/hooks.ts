import type { JobEnvelope } from "../../src/queues/job-envelope.js";
import type { Producer } from "../../src/queues/producer.js";

/**
 * A real object whose one method `name` runs `hook` (with the call's number, from 1) before
 * it; every other member is the object's own. For holding a step of real code at a chosen
 * point, instead of polling for a window.
 */
export function withHook<T extends object>(
  target: T,
  name: keyof T & string,
  hook: (call: number, args: unknown[]) => Promise<void>,
): T {
  let calls = 0;
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof value !== "function") return value;
      if (property !== name) return value.bind(object);
      return async (...args: unknown[]) => {
        calls += 1;
        await hook(calls, args);
        return value.apply(object, args);
      };
    },
  });
}

/** A producer whose enqueue of each chunk of batch rows first runs `hook`. */
export function hookedProducer(
  producer: Producer,
  hook: (call: number, envelopes: readonly JobEnvelope[]) => Promise<void>,
): Producer {
  return withHook(producer, "enqueueUnlessReused", (call, args) =>
    hook(call, args[0] as readonly JobEnvelope[]),
  );
}

/** A gate: `entered` resolves when the holder reaches it, `release` lets it through. */
export function gate(): { wait(): Promise<void>; entered: Promise<void>; release(): void } {
  let release: () => void = () => undefined;
  let enter: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    release = resolve;
  });
  const entered = new Promise<void>((resolve) => {
    enter = resolve;
  });
  return {
    async wait() {
      enter();
      await opened;
    },
    entered,
    release,
  };
}
