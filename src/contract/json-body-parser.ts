import type { FastifyInstance } from "fastify";
import type { FreeFormProblem } from "./free-form.js";
import { parseJsonText } from "./json-text.js";

/**
 * Makes `application/json` the only body type `app` parses, by the contract's rules (nesting
 * measured before parsing, prototype keys and non-finite numbers refused): JSON sent as
 * text/plain is a 415, not a string body. `refuse` turns a problem into the server's error.
 * Used by moneyq's API and by the sandbox, each with its own error shape.
 */
export function installJsonBodyParser(
  app: FastifyInstance,
  refuse: (problem: FreeFormProblem) => Error,
): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, text, done) => {
    const parsed = parseJsonText(text as string);
    if (parsed.ok) return done(null, parsed.value);
    done(refuse(parsed.problem), undefined);
  });
}
