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

/** What an inbound text asks for under the account's settings; opting out wins a keyword in both lists. */
export const intentOf = (settings: OptOutSettings, text: string | null): "opt_out" | "opt_in" | undefined => {
  if (text === null || text.length > 64) return undefined
  const word = normalize(text)
  if (word === "") return undefined
  if (settings.opt_out_keywords.some((keyword) => normalize(keyword) === word)) return "opt_out"
  if (settings.opt_in_keywords.some((keyword) => normalize(keyword) === word)) return "opt_in"
  return undefined
}
