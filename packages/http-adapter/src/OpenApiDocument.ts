/**
 * What the served OpenAPI document adds to what `OpenApi.fromApi` generates: tidier `anyOf`s and
 * a `servers` entry. `Api.ts` applies `tidy` (so the docs page and every `fromApi(Api)` get it);
 * `Server.ts` adds the server per request.
 */

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonObject = { readonly [key: string]: Json }

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The same JSON whatever the order of its keys, to compare schemas. */
const canonical = (value: Json): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(",")}]`
    : isObject(value)
      ? `{${Object.keys(value)
          .sort()
          .map((key) => `${JSON.stringify(key)}:${canonical(value[key] as Json)}`)
          .join(",")}}`
      : JSON.stringify(value)

/**
 * Rewrites the `anyOf`s Effect's JSON Schema generator leaves redundant, which linters (redocly's
 * `no-illogical-composition-keywords`) and code generators trip on. The generator renders
 * `undefined` as `{"type": "null"}` (the JSON codec sends and reads it as null), as it does `null`,
 * and does not merge the two: `Schema.optional(Schema.NullOr(X))` becomes `anyOf: [X, null, null]`.
 * It also writes a one-member union (`Schema.Literals(["whatsapp"])`) as a one-member `anyOf`, and
 * `Schema.NullOr(Schema.Unknown)` as `anyOf: [{}, null]`, where `{}` already matches anything. So:
 * members that repeat one another are dropped; an `anyOf` with an empty member is dropped (its
 * schema keeps its description and other keywords); an `anyOf` left with one member is replaced by
 * that member. What each schema accepts is unchanged. Every object with an `anyOf` list is taken
 * for a schema: the document has no example or default value that holds one.
 */
export const tidy = <A>(document: A): A => tidyValue(document as Json) as A

const tidyValue = (value: Json): Json => {
  if (Array.isArray(value)) return value.map(tidyValue)
  if (!isObject(value)) return value
  const out: Record<string, Json> = {}
  for (const [key, child] of Object.entries(value)) out[key] = tidyValue(child)
  const members = out.anyOf
  if (!Array.isArray(members)) return out
  const { anyOf: _, ...rest } = out
  if (members.some((member) => isObject(member) && Object.keys(member).length === 0)) return rest
  const seen = new Set<string>()
  const distinct = members.filter((member) => {
    const key = canonical(member)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
  const only = distinct.length === 1 ? distinct[0] : undefined
  // The schema's own keywords (a description) win over the member's.
  if (isObject(only)) return { ...only, ...rest }
  return { ...rest, anyOf: distinct }
}

/** `host` or `host:port`: a name, an IPv4 address or a bracketed IPv6 address. Anything else is not used. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/**
 * Where the request reached the API: `X-Forwarded-Proto`'s first scheme (`http` or `https`) if
 * present, else http, and the `Host` header. Undefined without a usable `Host`.
 */
export const requestOrigin = (headers: Readonly<Record<string, string | undefined>>): string | undefined => {
  const host = headers.host?.trim()
  if (host === undefined || !HOST.test(host)) return undefined
  const forwarded = headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase()
  return `${forwarded === "https" ? "https" : "http"}://${host}`
}

/**
 * A configured public URL as the document's server URL: an absolute http(s) URL without query or
 * fragment, its trailing slashes dropped (the document's paths start with one). Throws otherwise.
 */
export const publicServerUrl = (publicUrl: string): string => {
  const url = URL.canParse(publicUrl) ? new URL(publicUrl) : undefined
  if (
    url === undefined ||
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    url.search !== "" ||
    url.hash !== "" ||
    url.username !== "" ||
    url.password !== ""
  ) {
    throw new Error(`The public URL must be an absolute http(s) URL without query or fragment, got ${publicUrl}`)
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`
}

/** The document with one server: `url`, or, unknown, `/` (the host that served the document). */
export const withServer = <A extends object>(
  document: A,
  url: string | undefined
): A & { servers: Array<{ url: string }> } => ({
  ...document,
  servers: [{ url: url ?? "/" }]
})
