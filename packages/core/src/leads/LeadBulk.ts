import type { Lead } from "./Lead.ts"
import type { BulkSpec, RowError } from "./LeadJob.ts"

/** The most tags a lead may have (`CreateLead`'s limit), which a bulk change may not push it past. */
const MAX_TAGS = 50

/**
 * One lead under a bulk change (docs/contract.md, "Imports, exports and bulk changes"): the tags added
 * (at the end, once) and removed, the assignment set. `undefined` when the lead has these values
 * already (it is not written and its `updated_at` stays); an error when it would pass the tag limit.
 */
export const apply = (lead: Lead, spec: BulkSpec, now: string): Lead | RowError | undefined => {
  const removed = new Set(spec.removeTags)
  const kept = lead.tags.filter((tag) => !removed.has(tag))
  const tags = [...kept, ...spec.addTags.filter((tag) => !kept.includes(tag))]
  if (tags.length > MAX_TAGS && tags.length > lead.tags.length) {
    return { row: null, lead_id: lead.id, field: "add_tags", reason: `the lead would have more than ${MAX_TAGS} tags` }
  }
  const assigned = spec.assignTo === undefined ? lead.assigned_user_id : spec.assignTo
  const sameTags = tags.length === lead.tags.length && tags.every((tag, i) => tag === lead.tags[i])
  if (sameTags && assigned === lead.assigned_user_id) return undefined
  return { ...lead, tags, assigned_user_id: assigned, updated_at: now }
}

export const isError = (outcome: Lead | RowError): outcome is RowError => "reason" in outcome
