/** A provider's message or failure reason is kept to this many characters. */
export const MAX_TEXT_CHARS = 500;
/** A provider's `data` kept on a result (serialised) is at most this large. */
export const MAX_DATA_BYTES = 16 * 1024;
/** How much of a too-large `data` is kept, as text. */
const DATA_HEAD_CHARS = 1024;

/**
 * A provider's text, cut: whatever the provider says is stored on the job, in the result
 * stream and in webhooks, so it must not be able to grow them without bound.
 */
export function cutText(text: string, max = MAX_TEXT_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (cut from ${text.length} characters)`;
}

/** The provider's `data` as kept on a result: itself when small, a truncated marker when not. */
export function boundedData(data: unknown): unknown {
  const json = JSON.stringify(data) ?? "";
  const bytes = Buffer.byteLength(json);
  if (bytes <= MAX_DATA_BYTES) return data;
  return { truncated: true, bytes, head: json.slice(0, DATA_HEAD_CHARS) };
}
