import { Schema } from "effect"
import { Text } from "../Text.ts"

/**
 * An interactive message as WhatsApp's Cloud API takes it (docs/contract-messaging.md §5.4):
 * up to three reply buttons, or a list of rows in sections, checked against Meta's limits so a
 * mistake is a 400 naming the field instead of a `failed` message minutes later. Lengths are
 * counted in UTF-16 units, as everywhere in the contract.
 */

/** A non-empty string of at most `max` characters, named in its messages. */
const bounded = (field: string, max: number) =>
  Text.check(
    Schema.isMinLength(1, { message: `${field} must not be empty` }),
    Schema.isMaxLength(max, { message: `${field} must be at most ${max} characters` })
  )

/** A string that must be exactly `value` (a checked string, so the 400 names the field). */
const exactly = (field: string, value: string) =>
  Schema.String.check(Schema.makeFilter((given: string) => given === value || `${field} must be "${value}"`))

const Header = Schema.Struct({
  type: exactly("header.type", "text"),
  text: bounded("header.text", 60)
})

const Body = Schema.Struct({ text: bounded("body.text", 1024) })
const Footer = Schema.Struct({ text: bounded("footer.text", 60) })

const Button = Schema.Struct({
  type: exactly("button type", "reply"),
  reply: Schema.Struct({ id: bounded("reply.id", 256), title: bounded("reply.title", 20) })
})

const Row = Schema.Struct({
  id: bounded("row id", 200),
  title: bounded("row title", 24),
  description: Schema.optional(bounded("row description", 72))
})

const Section = Schema.Struct({
  title: Schema.optional(bounded("section title", 24)),
  rows: Schema.Array(Row).check(
    Schema.isMinLength(1, { message: "a section needs at least one row" }),
    Schema.isMaxLength(10, { message: "at most 10 rows" })
  )
})

const Action = Schema.Struct({
  buttons: Schema.optional(
    Schema.Array(Button).check(
      Schema.isMinLength(1, { message: "at least one button" }),
      Schema.isMaxLength(3, { message: "at most 3 buttons" })
    )
  ),
  button: Schema.optional(bounded("action.button", 20)),
  sections: Schema.optional(
    Schema.Array(Section).check(
      Schema.isMinLength(1, { message: "at least one section" }),
      Schema.isMaxLength(10, { message: "at most 10 sections" })
    )
  )
})

type Fields = {
  readonly type: string
  readonly action: {
    readonly buttons?: ReadonlyArray<{ readonly reply: { readonly id: string; readonly title: string } }> | undefined
    readonly button?: string | undefined
    readonly sections?:
      | ReadonlyArray<{ readonly title?: string | undefined; readonly rows: ReadonlyArray<{ readonly id: string }> }>
      | undefined
  }
}

/** The index of the first value seen before, if any. */
const firstRepeat = (values: ReadonlyArray<string>): number | undefined => {
  const seen = new Set<string>()
  for (const [index, value] of values.entries()) {
    if (seen.has(value)) return index
    seen.add(value)
  }
  return undefined
}

// The rules across fields, each reported at the field that breaks it.
const consistent = Schema.makeFilter((interactive: Fields) => {
  const { action } = interactive
  // An unknown type is reported by its own check.
  if (interactive.type !== "button" && interactive.type !== "list") return true
  if (interactive.type === "button") {
    if (action.buttons === undefined) return { path: ["action", "buttons"], issue: "reply buttons need action.buttons" }
    if (action.button !== undefined) return { path: ["action", "button"], issue: "only a list has action.button" }
    if (action.sections !== undefined) return { path: ["action", "sections"], issue: "only a list has sections" }
    const id = firstRepeat(action.buttons.map((button) => button.reply.id))
    if (id !== undefined) return { path: ["action", "buttons", id, "reply", "id"], issue: "button ids must be unique" }
    const title = firstRepeat(action.buttons.map((button) => button.reply.title))
    if (title !== undefined) {
      return { path: ["action", "buttons", title, "reply", "title"], issue: "button titles must be unique" }
    }
    return true
  }
  if (action.buttons !== undefined) return { path: ["action", "buttons"], issue: "only reply buttons have buttons" }
  if (action.button === undefined) return { path: ["action", "button"], issue: "a list needs action.button" }
  if (action.sections === undefined) return { path: ["action", "sections"], issue: "a list needs action.sections" }
  const rows = action.sections.flatMap((section, s) => section.rows.map((row, r) => ({ id: row.id, s, r })))
  if (rows.length > 10) return { path: ["action", "sections"], issue: "a list has at most 10 rows in all" }
  if (action.sections.length > 1) {
    const untitled = action.sections.findIndex((section) => section.title === undefined)
    if (untitled !== -1) {
      return {
        path: ["action", "sections", untitled, "title"],
        issue: "each section needs a title when there are several"
      }
    }
  }
  const repeated = firstRepeat(rows.map((row) => row.id))
  if (repeated !== undefined) {
    const row = rows[repeated]!
    return { path: ["action", "sections", row.s, "rows", row.r, "id"], issue: "row ids must be unique" }
  }
  return true
})

export const Interactive = Schema.Struct({
  type: Schema.String.check(
    Schema.makeFilter((type: string) => type === "button" || type === "list" || 'type must be "button" or "list"')
  ),
  header: Schema.optional(Header),
  body: Body,
  footer: Schema.optional(Footer),
  action: Action
})
  .check(consistent)
  .annotate({ identifier: "Interactive" })
export type Interactive = typeof Interactive.Type

/** `POST /api/v1/messages/{id}/reactions`: an emoji, or "" to take the reaction back. */
export const React = Schema.Struct({
  emoji: Schema.String.check(
    Schema.makeFilter(
      (emoji: string) => emoji === "" || isOneEmoji(emoji) || 'emoji must be one emoji, or "" to remove the reaction'
    )
  )
}).annotate({ identifier: "React" })
export type React = typeof React.Type

const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" })
const PICTOGRAPH = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20e3/u

/** One grapheme that draws as an emoji (a flag, a keycap, a person with a skin tone …). */
const isOneEmoji = (value: string): boolean => {
  if (value.length > 32 || !value.isWellFormed()) return false
  const graphemes = [...segmenter.segment(value)]
  return graphemes.length === 1 && PICTOGRAPH.test(value)
}
