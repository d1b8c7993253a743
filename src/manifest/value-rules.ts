// Rules for the values a function is handed (events, environment variables), shared by function.yaml
// and /v1 so that both refuse the same inputs with the same words (issue 31 items 9, 13, 14).
// Everything here is iterative: the inputs being judged are exactly the ones that would overflow a
// recursive walker.

/**
 * How deeply an event may nest (arrays and objects). Real events are a few levels deep; a bound keeps
 * every recursive consumer downstream (JSON.stringify, YAML, the runtimes' decoders, croner's callers)
 * far from the stack's limit, so a hostile value fails its own function, never the process.
 */
export const MAX_EVENT_DEPTH = 64;

/** The nesting depth of a JSON-like value, counted without recursion; stops counting past `limit`. */
export function valueDepth(value: unknown, limit = MAX_EVENT_DEPTH): number {
  let deepest = 0;
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const { v, depth } = top;
    if (v === null || typeof v !== 'object') continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > limit) return deepest;
    for (const item of Array.isArray(v) ? v : Object.values(v)) stack.push({ v: item, depth: here });
  }
  return deepest;
}

/** The deepest bracket nesting of JSON text (strings skipped), read in one pass; stops past `limit`. */
export function jsonTextDepth(text: string, limit = MAX_EVENT_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/**
 * Brackets a function.yaml may hold open at once, counted over the raw text before any parser runs.
 * Far above MAX_EVENT_DEPTH (quoted brackets count too, so a generous margin keeps real files clear):
 * it only stops text that would send a recursive YAML parser towards the stack's limit.
 */
export const MAX_OPEN_BRACKETS = 4 * MAX_EVENT_DEPTH;

/** The 1-based line where `text` first holds more than `limit` `[`/`{` open, or undefined. */
export function lineOfExcessBrackets(text: string, limit = MAX_OPEN_BRACKETS): number | undefined {
  let open = 0;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) line++;
    else if (c === 0x5b || c === 0x7b) {
      if (++open > limit) return line;
    } else if ((c === 0x5d || c === 0x7d) && open > 0) open--;
  }
  return undefined;
}

/** Why an event (a value, or JSON text) cannot be handed to a function, or undefined when it can. */
export function eventProblem(event: unknown): string | undefined {
  const depth = typeof event === 'string' ? jsonTextDepth(event) : valueDepth(event);
  return depth > MAX_EVENT_DEPTH
    ? `nested deeper than ${MAX_EVENT_DEPTH} levels of arrays and objects; flatten the event`
    : undefined;
}

/**
 * Why `value` cannot be an environment variable's value, or undefined. A NUL byte cannot be passed
 * through execve (the C string ends there) nor set in a container's environment: the function would
 * fail to start, so it is refused where it is written.
 */
export function envValueProblem(value: string): string | undefined {
  return value.includes('\0')
    ? 'contains a NUL byte (\\0), which no environment variable can hold'
    : undefined;
}
