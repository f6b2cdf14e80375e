import type { Dispatcher } from "undici";

/** The code of the error a request is abandoned with when it could only be written too late. */
export const NOT_WRITTEN_BY_DEADLINE = "MONEYQ_NOT_WRITTEN_BY_DEADLINE";

/** A request that was not written by its `sendBy`: not one byte of it left this process. */
export class NotWrittenByDeadline extends Error {
  readonly code = NOT_WRITTEN_BY_DEADLINE;
  constructor() {
    super("the request could not be written to a connection by its deadline; it was not sent");
    this.name = "NotWrittenByDeadline";
  }
}

/**
 * An interceptor: the request is written to its connection by `sendBy` (this process's
 * `performance.now()`), or not at all. undici calls `onRequestStart` as it hands the request to
 * a connection, synchronously before the first byte is written, so a process stopped while the
 * request waited (for a connection, a free one, or the CPU) writes nothing when it runs again.
 */
export function writtenBy(sendBy: number): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => dispatch(options, deadlineHandler(handler, sendBy));
}

/** `handler`, refusing to start the request after `sendBy`. */
function deadlineHandler(
  handler: Dispatcher.DispatchHandler,
  sendBy: number,
): Dispatcher.DispatchHandler {
  return {
    onRequestStart(controller, context) {
      if (performance.now() > sendBy) {
        controller.abort(new NotWrittenByDeadline());
        return;
      }
      handler.onRequestStart?.(controller, context);
    },
    onRequestUpgrade: (controller, statusCode, headers, socket) =>
      handler.onRequestUpgrade?.(controller, statusCode, headers, socket),
    onResponseStart: (controller, statusCode, headers, statusMessage) =>
      handler.onResponseStart?.(controller, statusCode, headers, statusMessage),
    onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
    onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
    onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
    onResponseStarted: () => handler.onResponseStarted?.(),
    onBodySent: (chunk) => handler.onBodySent?.(chunk),
    onRequestSent: () => handler.onRequestSent?.(),
  };
}
