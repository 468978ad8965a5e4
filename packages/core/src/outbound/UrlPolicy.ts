import { isIpLiteral, isPublicAddress } from "./Addresses.ts"

export const MAX_URL_LENGTH = 2048

// Names that only mean something inside a network.
const INTERNAL_SUFFIXES = [".localhost", ".local", ".internal", ".intranet", ".lan", ".home.arpa", ".corp"]

/**
 * Why a webhook URL is refused, or undefined when it is acceptable. With
 * `allowPrivate` (local development and tests only) http and internal hosts
 * pass; the other rules still hold.
 */
export const problemWith = (raw: string, options: { readonly allowPrivate: boolean }): string | undefined => {
  if (raw.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return "url must be an absolute URL"
  }
  if (url.protocol !== "https:" && !(options.allowPrivate && url.protocol === "http:")) {
    return options.allowPrivate ? "url must use http or https" : "url must use https"
  }
  if (url.username !== "" || url.password !== "") return "url must not contain credentials"
  if (options.allowPrivate) return undefined
  // The URL parser has already turned every IPv4 spelling (2130706433, 0x7f.1, …) into dotted form.
  // A trailing dot names the same host ("localhost." is localhost); without it the checks below would miss it.
  const host = url.hostname.toLowerCase().replace(/\.+$/, "")
  if (isIpLiteral(host))
    return isPublicAddress(host) ? undefined : "url must not point at a private or internal address"
  if (host === "localhost" || INTERNAL_SUFFIXES.some((suffix) => host.endsWith(suffix)) || !host.includes(".")) {
    return "url must not point at a private or internal address"
  }
  return undefined
}
