import type { OptOutSettings } from "./OptOutSettings.ts"

/**
 * A text as keywords are compared: Unicode-normalized, without the spaces and punctuation around it,
 * in capitals. The whole text must be the keyword: "please stop sending offers" is a message for a
 * person to read, not an opt-out.
 */
export const normalize = (text: string): string =>
  text
    .normalize("NFKC")
    .replace(/^[\p{P}\p{S}\s]+|[\p{P}\p{S}\s]+$/gu, "")
    .toLocaleUpperCase("en-US")

/** The longest keyword an account may set. */
export const MAX_KEYWORD_LENGTH = 30

/**
 * Whether a text could be a keyword of any account: a message longer than a keyword can be is
 * not one, so most inbound texts need no read of the account's settings on the webhook's path.
 */
export const mayBeKeyword = (text: string | null): text is string => {
  if (text === null || text.length > 4 * MAX_KEYWORD_LENGTH) return false
  const word = normalize(text)
  return word !== "" && word.length <= MAX_KEYWORD_LENGTH
}

/** What an inbound text asks for under the account's settings; opting out wins a keyword in both lists. */
export const intentOf = (settings: OptOutSettings, text: string | null): "opt_out" | "opt_in" | undefined => {
  if (!mayBeKeyword(text)) return undefined
  const word = normalize(text)
  if (settings.opt_out_keywords.some((keyword) => normalize(keyword) === word)) return "opt_out"
  if (settings.opt_in_keywords.some((keyword) => normalize(keyword) === word)) return "opt_in"
  return undefined
}
