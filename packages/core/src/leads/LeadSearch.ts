import { Schema } from "effect"
import { Limit, Offset, QueryTime } from "../Pagination.ts"
import { Text } from "../Text.ts"
import { type Lead, LeadStatus } from "./Lead.ts"

/**
 * What `GET /api/v1/leads` can ask (docs/contract.md, "Finding leads"): a search, filters, an order,
 * and a page by offset or by cursor. The rules live here, once: the memory store applies `matches`
 * and `compare` as they are, the SQL store says the same in SQL.
 */

export const SORTS = ["-created_at", "created_at", "-updated_at", "updated_at", "name", "-name"] as const
export type Sort = (typeof SORTS)[number]

const LeadId = Schema.String.check(Schema.isPattern(/^ld_[0-9a-z]{1,64}$/, { message: "must be a lead id (ld_…)" }))

const Uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The query of `GET /api/v1/leads`: each parameter checked on its own, so a 400 names the one that is wrong. */
export const LeadListQuery = Schema.Struct({
  limit: Schema.optional(Limit),
  offset: Schema.optional(
    Offset.annotate({ description: "Position of the first item (default 0); not with a cursor" })
  ),
  q: Schema.optional(
    Text.check(
      Schema.isMinLength(1, { message: "q must not be empty" }),
      Schema.isMaxLength(200, { message: "q must be at most 200 characters" })
    ).annotate({
      description:
        "Leads whose name or email starts with it (any case), or whose phone starts with its digits when it is a phone number in any format (`+1 (415) 555`, `1415555`)"
    })
  ),
  status: Schema.optional(
    Schema.String.check(
      Schema.makeFilter(
        (value: string) =>
          value.split(",").every((status) => (LeadStatus.literals as ReadonlyArray<string>).includes(status)) ||
          `must be one or more of ${LeadStatus.literals.join(", ")}, separated by commas`
      )
    ).annotate({ description: "One status, or several separated by commas (any of them)" })
  ),
  tag: Schema.optional(
    Schema.Array(
      Text.check(
        Schema.isMinLength(1, { message: "a tag must not be empty" }),
        Schema.isMaxLength(64, { message: "a tag must be at most 64 characters" })
      )
    ).check(Schema.isMaxLength(20, { message: "at most 20 tags" }))
  ).annotate({ description: "Leads with this tag; repeat the parameter for any of several (`tag=vip&tag=hot`)" }),
  assigned_user_id: Schema.optional(
    Schema.String.check(
      Schema.makeFilter((value: string) => value === "none" || Uuid.test(value) || "must be a user id or none")
    ).annotate({ description: "Leads assigned to this user, or `none` for unassigned leads" })
  ),
  created_after: Schema.optional(QueryTime.annotate({ description: "Created at or after this time" })),
  created_before: Schema.optional(QueryTime.annotate({ description: "Created before this time" })),
  updated_after: Schema.optional(QueryTime.annotate({ description: "Changed at or after this time" })),
  sort: Schema.optional(
    Schema.Literals(SORTS).annotate({
      description:
        "The order: `-created_at` (newest first, the default), `created_at`, `-updated_at`, `updated_at`, `name`, `-name` (names in any case)"
    })
  ),
  starting_after: Schema.optional(
    LeadId.annotate({ description: "A cursor: the leads after this one in the list's order (the last id of a page)" })
  ),
  ending_before: Schema.optional(
    LeadId.annotate({ description: "A cursor: the leads before this one in the list's order (the first id of a page)" })
  )
}).annotate({ identifier: "LeadListQuery" })
export type LeadListQuery = typeof LeadListQuery.Type

/** Which leads: each condition when given, all of them at once. */
export interface LeadFilter {
  /** Lower-cased: a prefix of the lower-cased name or email. */
  readonly prefix: string | undefined
  /** The digits of a search that reads as a phone number: a prefix of the phone's digits. */
  readonly phoneDigits: string | undefined
  readonly statuses: ReadonlyArray<string>
  readonly tags: ReadonlyArray<string>
  /** A user id, or `null` for unassigned leads. */
  readonly assignedUserId: string | null | undefined
  readonly createdAfter: string | undefined
  readonly createdBefore: string | undefined
  readonly updatedAfter: string | undefined
}

export interface LeadOrder {
  readonly key: "created_at" | "updated_at" | "name"
  readonly descending: boolean
}

/** Where the page starts: at an offset, or just after or just before a lead of the list. */
export type LeadWindow =
  | { readonly by: "offset"; readonly offset: number }
  | { readonly by: "after"; readonly anchor: Lead }
  | { readonly by: "before"; readonly anchor: Lead }

export interface LeadSearch {
  readonly filter: LeadFilter
  readonly order: LeadOrder
  readonly window: LeadWindow
  readonly limit: number
}

/** One page: its leads in the list's order, and whether there are more beyond it (before it, for `before`). */
export interface LeadPage {
  readonly items: ReadonlyArray<Lead>
  readonly hasMore: boolean
}

// Digits, spaces and the marks people write numbers with, and at least one digit.
const PHONE_LIKE = /^[+\d\s().-]*\d[\d\s().-]*$/

export const filterOf = (query: LeadListQuery): LeadFilter => {
  const q = query.q?.trim()
  return {
    prefix: q === undefined || q === "" ? undefined : q.toLowerCase(),
    phoneDigits: q !== undefined && PHONE_LIKE.test(q) ? q.replace(/\D/g, "") : undefined,
    statuses: query.status === undefined ? [] : [...new Set(query.status.split(","))],
    tags: [...new Set(query.tag ?? [])],
    assignedUserId: query.assigned_user_id === "none" ? null : query.assigned_user_id?.toLowerCase(),
    createdAfter: query.created_after === undefined ? undefined : new Date(query.created_after).toISOString(),
    createdBefore: query.created_before === undefined ? undefined : new Date(query.created_before).toISOString(),
    updatedAfter: query.updated_after === undefined ? undefined : new Date(query.updated_after).toISOString()
  }
}

export const orderOf = (sort: Sort | undefined): LeadOrder => {
  const chosen = sort ?? "-created_at"
  const descending = chosen.startsWith("-")
  return { key: (descending ? chosen.slice(1) : chosen) as LeadOrder["key"], descending }
}

/** Whether the filter narrows the list at all (an unfiltered list is counted cheaply). */
export const isFiltered = (filter: LeadFilter): boolean =>
  filter.prefix !== undefined ||
  filter.statuses.length > 0 ||
  filter.tags.length > 0 ||
  filter.assignedUserId !== undefined ||
  filter.createdAfter !== undefined ||
  filter.createdBefore !== undefined ||
  filter.updatedAfter !== undefined

const digitsOf = (phone: string) => phone.replace(/\D/g, "")

export const matches = (lead: Lead, filter: LeadFilter): boolean => {
  if (filter.prefix !== undefined) {
    const found =
      lead.name.toLowerCase().startsWith(filter.prefix) ||
      lead.email?.toLowerCase().startsWith(filter.prefix) === true ||
      (filter.phoneDigits !== undefined && digitsOf(lead.phone).startsWith(filter.phoneDigits))
    if (!found) return false
  }
  if (filter.statuses.length > 0 && !filter.statuses.includes(lead.status)) return false
  if (filter.tags.length > 0 && !lead.tags.some((tag) => filter.tags.includes(tag))) return false
  if (
    filter.assignedUserId !== undefined &&
    lead.assigned_user_id?.toLowerCase() !== (filter.assignedUserId ?? undefined)
  ) {
    return false
  }
  if (filter.createdAfter !== undefined && lead.created_at < filter.createdAfter) return false
  if (filter.createdBefore !== undefined && lead.created_at >= filter.createdBefore) return false
  if (filter.updatedAfter !== undefined && lead.updated_at < filter.updatedAfter) return false
  return true
}

/** The value a lead sorts by (names in lower case, as SQL's `lower(name)` under the C collation for ASCII). */
export const sortValue = (lead: Lead, key: LeadOrder["key"]): string =>
  key === "name" ? lead.name.toLowerCase() : lead[key]

/** The list's order: the key, then the id, both in the order's direction. */
export const compare =
  (order: LeadOrder) =>
  (a: Lead, b: Lead): number => {
    const x = sortValue(a, order.key)
    const y = sortValue(b, order.key)
    const ascending = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
    return order.descending ? -ascending : ascending
  }

/** A page of `matching` (already filtered) as the search's window and limit take it. */
export const pageOf = (matching: ReadonlyArray<Lead>, search: LeadSearch): LeadPage => {
  const sorted = [...matching].sort(compare(search.order))
  const window = search.window
  if (window.by === "offset") {
    const items = sorted.slice(window.offset, window.offset + search.limit)
    return { items, hasMore: window.offset + search.limit < sorted.length }
  }
  const byOrder = compare(search.order)
  if (window.by === "after") {
    const after = sorted.filter((lead) => byOrder(lead, window.anchor) > 0)
    return { items: after.slice(0, search.limit), hasMore: after.length > search.limit }
  }
  const before = sorted.filter((lead) => byOrder(lead, window.anchor) < 0)
  return { items: before.slice(Math.max(0, before.length - search.limit)), hasMore: before.length > search.limit }
}

/** The page's place in the list: by offset as every list has it, and the cursors either side of it. */
export const LeadListMeta = Schema.Struct({
  limit: Schema.Int,
  offset: Schema.NullOr(Schema.Int).annotate({ description: "The page's offset; null for a page by cursor" }),
  total: Schema.NullOr(Schema.Int).annotate({
    description:
      "Every lead of the account when the list is not searched or filtered; null when it is (counting every match would cost more than the page)"
  }),
  has_more: Schema.Boolean.annotate({
    description: "More leads after this page; for a page asked with ending_before, more before it"
  }),
  next_offset: Schema.NullOr(Schema.Int).annotate({ description: "The next page's offset; null for a page by cursor" }),
  next_starting_after: Schema.NullOr(Schema.String).annotate({
    description: "starting_after for the next page (its last lead's id), when there are leads after it"
  }),
  previous_ending_before: Schema.NullOr(Schema.String).annotate({
    description: "ending_before for the page before (its first lead's id), when there are leads before it"
  })
}).annotate({ identifier: "LeadListMeta" })
export type LeadListMeta = typeof LeadListMeta.Type

const cursors = (items: ReadonlyArray<Lead>, after: boolean, before: boolean) => ({
  next_starting_after: after && items.length > 0 ? items[items.length - 1]!.id : null,
  previous_ending_before: before && items.length > 0 ? items[0]!.id : null
})

/** An unfiltered page by offset, whose total is known. */
export const offsetMeta = (
  page: { readonly limit: number; readonly offset: number },
  total: number,
  items: ReadonlyArray<Lead>
): LeadListMeta => {
  const hasMore = page.offset + page.limit < total
  return {
    limit: page.limit,
    offset: page.offset,
    total,
    has_more: hasMore,
    next_offset: hasMore ? page.offset + page.limit : null,
    ...cursors(items, hasMore, page.offset > 0)
  }
}

export const metaOf = (search: LeadSearch, found: LeadPage, total: number | null): LeadListMeta => {
  const window = search.window
  if (window.by === "offset") {
    return {
      limit: search.limit,
      offset: window.offset,
      total,
      has_more: found.hasMore,
      next_offset: found.hasMore ? window.offset + search.limit : null,
      ...cursors(found.items, found.hasMore, window.offset > 0)
    }
  }
  return {
    limit: search.limit,
    offset: null,
    total,
    has_more: found.hasMore,
    next_offset: null,
    // The anchor itself lies on the other side of the page.
    ...cursors(found.items, window.by === "before" || found.hasMore, window.by === "after" || found.hasMore)
  }
}
