import type { Lead } from "../leads/Lead.ts"

/**
 * Placeholders in a campaign's template (docs/contract-messaging.md §8.1): `{{lead.name}}`,
 * `{{lead.phone}}`, `{{lead.email}}` and `{{lead.attributes.KEY}}`, in any string of the
 * template's components, rendered per recipient. Anything else between braces is refused
 * when the campaign is written, so a typo never reaches a customer.
 */

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g
const ATTRIBUTE = /^lead\.attributes\.([A-Za-z0-9_-]{1,100})$/
const FIELDS = new Set(["lead.name", "lead.phone", "lead.email"])

const strings = (value: unknown, found: Array<string>): Array<string> => {
  if (typeof value === "string") found.push(value)
  else if (Array.isArray(value)) for (const item of value) strings(item, found)
  else if (typeof value === "object" && value !== null) for (const item of Object.values(value)) strings(item, found)
  return found
}

const isKnown = (name: string) => FIELDS.has(name) || ATTRIBUTE.test(name)

/** The placeholders of `components` that are not ones of the list above, each once, as written. */
export const unknown = (components: unknown): ReadonlyArray<string> => {
  const found = new Set<string>()
  for (const text of strings(components, [])) {
    for (const match of text.matchAll(PLACEHOLDER)) if (!isKnown(match[1]!)) found.add(match[0])
  }
  return [...found]
}

/** A lead's value for a placeholder name; "" when it has none (an absent email, attribute or a non-text value). */
const leadValue = (name: string, lead: Pick<Lead, "name" | "phone" | "email" | "attributes">): string => {
  if (name === "lead.name") return lead.name
  if (name === "lead.phone") return lead.phone
  if (name === "lead.email") return lead.email ?? ""
  const key = ATTRIBUTE.exec(name)?.[1]
  const value = key === undefined ? undefined : lead.attributes[key]
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : ""
}

export type Rendered =
  | { readonly _tag: "Rendered"; readonly components: unknown }
  | { readonly _tag: "Missing"; readonly placeholder: string }

/**
 * `components` with every placeholder replaced by the lead's value. A placeholder that renders
 * empty makes the recipient `skipped` (`missing_template_value`): Meta refuses empty parameters.
 */
export const render = (components: unknown, lead: Pick<Lead, "name" | "phone" | "email" | "attributes">): Rendered => {
  let missing: string | undefined
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") {
      return value.replace(PLACEHOLDER, (whole, name: string) => {
        const rendered = leadValue(name, lead)
        if (rendered.trim() === "" && missing === undefined) missing = whole
        return rendered
      })
    }
    if (Array.isArray(value)) return value.map(walk)
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item)]))
    }
    return value
  }
  const result = walk(components)
  return missing === undefined ? { _tag: "Rendered", components: result } : { _tag: "Missing", placeholder: missing }
}
