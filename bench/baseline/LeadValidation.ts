import { parsePhoneNumberFromString } from "libphonenumber-js"
import { LEAD_STATUSES } from "./Schema.ts"

/**
 * The baseline's lead validation, with the messages of the lead contract (docs/contract.md):
 * what a body may hold, as the wire contract words it, written apart from Leadline's schemas.
 */

export interface Problem {
  readonly path: string
  readonly message: string
}

// ---------------------------------------------------------------------------------------------
// Leads: validation with the messages of the lead contract.

const NAME_MAX = 200
const EMAIL_MAX = 254
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const TAG_MAX = 64
const TAGS_MAX = 50
const ATTRIBUTES_MAX_BYTES = 16 * 1024
const JSON_MAX_DEPTH = 32
const PHONE_MESSAGE = "phone must be an international number with a leading +, e.g. +14155550100"
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const FIELDS = new Set(["name", "phone", "email", "tags", "status", "assigned_user_id", "attributes"])

/** Why PostgreSQL could not store this text, if it could not. */
const textProblem = (value: string): string | undefined =>
  value.includes("\u0000")
    ? "must not contain NUL characters"
    : value.isWellFormed()
      ? undefined
      : "must be well-formed Unicode (no lone surrogates)"

/** Why a JSON value could not go into jsonb (too deep, or a bad string or key anywhere). */
const jsonProblem = (value: unknown): string | undefined => {
  const stack: Array<readonly [unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!
    if (typeof current === "string") {
      const problem = textProblem(current)
      if (problem !== undefined) return problem
    } else if (typeof current === "object" && current !== null) {
      if (depth >= JSON_MAX_DEPTH) return `must not nest deeper than ${JSON_MAX_DEPTH} levels`
      for (const [key, child] of Object.entries(current)) {
        const problem = textProblem(key)
        if (problem !== undefined) return problem
        stack.push([child, depth + 1])
      }
    }
  }
  return undefined
}

/** E.164 of a valid number written in international form ("+1 415-555 0100" → "+14155550100"). */
export const toE164 = (input: string): string | undefined => {
  if (input.length > 64 || !input.trimStart().startsWith("+")) return undefined
  const parsed = parsePhoneNumberFromString(input)
  return parsed?.isValid() === true ? parsed.number : undefined
}

export interface LeadDraft {
  readonly name: string
  readonly phone: string
  readonly email: string | null
  readonly tags: ReadonlyArray<string>
  readonly status: string
  readonly assignedUserId: string | null
  readonly attributes: Record<string, unknown>
  /** The attributes as the JSON text that is stored. */
  readonly attributesJson: string
}

export const validateCreate = (body: unknown): { draft: LeadDraft } | { problems: Array<Problem> } => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { problems: [{ path: "", message: "the body must be a JSON object" }] }
  }
  const input = body as Record<string, unknown>
  const problems: Array<Problem> = []
  const problem = (path: string, message: string) => {
    problems.push({ path, message })
  }

  let name = ""
  if (input.name === undefined) problem("name", "name is required")
  else if (typeof input.name !== "string") problem("name", "name must be a string")
  else if (input.name.length === 0) problem("name", "name must not be empty")
  else if (input.name.length > NAME_MAX) problem("name", `name must be at most ${NAME_MAX} characters`)
  else if (textProblem(input.name) !== undefined) problem("name", textProblem(input.name)!)
  else name = input.name

  let phone = ""
  if (input.phone === undefined) problem("phone", "phone is required")
  else if (typeof input.phone !== "string") problem("phone", "phone must be a string")
  else {
    const e164 = toE164(input.phone)
    if (e164 === undefined) problem("phone", PHONE_MESSAGE)
    else phone = e164
  }

  let email: string | null = null
  if (input.email !== undefined && input.email !== null) {
    if (typeof input.email !== "string") problem("email", "email must be a string or null")
    else if (input.email.length > EMAIL_MAX) problem("email", `email must be at most ${EMAIL_MAX} characters`)
    else if (!EMAIL.test(input.email)) problem("email", "email must be an email address")
    else if (textProblem(input.email) !== undefined) problem("email", textProblem(input.email)!)
    else email = input.email
  }

  let tags: Array<string> = []
  if (input.tags !== undefined && input.tags !== null) {
    if (!Array.isArray(input.tags)) problem("tags", "tags must be an array of strings")
    else if (input.tags.length > TAGS_MAX) problem("tags", `at most ${TAGS_MAX} tags`)
    else {
      input.tags.forEach((tag: unknown, i: number) => {
        const path = `tags.${i}`
        if (typeof tag !== "string") problem(path, "a tag must be a string")
        else if (tag.length === 0) problem(path, "a tag must not be empty")
        else if (tag.length > TAG_MAX) problem(path, `a tag must be at most ${TAG_MAX} characters`)
        else if (textProblem(tag) !== undefined) problem(path, textProblem(tag)!)
      })
      tags = input.tags as Array<string>
    }
  }

  let status = "new"
  if (input.status !== undefined && input.status !== null) {
    if (typeof input.status !== "string" || !(LEAD_STATUSES as ReadonlyArray<string>).includes(input.status)) {
      problem("status", `status must be one of ${LEAD_STATUSES.join(", ")}`)
    } else status = input.status
  }

  let assignedUserId: string | null = null
  if (input.assigned_user_id !== undefined && input.assigned_user_id !== null) {
    if (typeof input.assigned_user_id !== "string")
      problem("assigned_user_id", "assigned_user_id must be a string or null")
    else if (!UUID.test(input.assigned_user_id)) problem("assigned_user_id", "no such user in this account")
    else assignedUserId = input.assigned_user_id.toLowerCase()
  }

  let attributes: Record<string, unknown> = {}
  let attributesJson = "{}"
  if (input.attributes !== undefined && input.attributes !== null) {
    const value = input.attributes
    if (typeof value !== "object" || Array.isArray(value)) problem("attributes", "attributes must be a JSON object")
    else {
      const bad = jsonProblem(value)
      if (bad !== undefined) problem("attributes", bad)
      else {
        attributes = value as Record<string, unknown>
        attributesJson = JSON.stringify(value)
        if (Buffer.byteLength(attributesJson) > ATTRIBUTES_MAX_BYTES) {
          problem("attributes", "attributes must be at most 16 KiB of JSON")
        }
      }
    }
  }

  for (const key of Object.keys(input)) if (!FIELDS.has(key)) problem(key, "unknown field")

  return problems.length > 0
    ? { problems }
    : { draft: { name, phone, email, tags, status, assignedUserId, attributes, attributesJson } }
}
