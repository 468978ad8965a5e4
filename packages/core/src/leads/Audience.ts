import type { Lead, LeadStatus } from "./Lead.ts"

/** Who a campaign is for (docs/contract-messaging.md §8.1). */
export interface Audience {
  readonly tags: ReadonlyArray<string>
  readonly statuses: ReadonlyArray<typeof LeadStatus.Type>
  readonly lead_ids: ReadonlyArray<string>
  readonly exclude_tags: ReadonlyArray<string>
}

/** The most lead ids an audience may name. */
export const MAX_LEAD_IDS = 1000

/** An audience that names nobody would be everybody: refused, so no one blasts a whole account by accident. */
export const isUnbounded = (audience: Audience): boolean =>
  audience.tags.length === 0 && audience.statuses.length === 0 && audience.lead_ids.length === 0

/**
 * The rule of §8.1: any of `tags` (when given) and one of `statuses` (when given), plus every
 * lead in `lead_ids`, minus any lead with one of `exclude_tags`. The SQL stores select with the
 * same rule in SQL; this is the one the in-memory store and the tests use.
 */
export const matches = (audience: Audience, lead: Pick<Lead, "id" | "tags" | "status">): boolean => {
  if (audience.exclude_tags.some((tag) => lead.tags.includes(tag))) return false
  if (audience.lead_ids.includes(lead.id)) return true
  if (audience.tags.length === 0 && audience.statuses.length === 0) return false
  const tagged = audience.tags.length === 0 || audience.tags.some((tag) => lead.tags.includes(tag))
  const inStatus = audience.statuses.length === 0 || audience.statuses.includes(lead.status)
  return tagged && inStatus
}
