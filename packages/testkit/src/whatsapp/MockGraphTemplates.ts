import { Reply } from "./MockGraph.ts"

/**
 * Meta's answers on a WABA's `message_templates` edge, for scripting `MockGraph` (its default
 * answer is a message send's): a page of the list, a create, a delete.
 */

export interface MetaTemplate {
  readonly id: string
  readonly name: string
  readonly language: string
  readonly status: string
  readonly category: string
  readonly components: ReadonlyArray<unknown>
  readonly quality_score?: { readonly score: string; readonly date?: number }
  readonly rejected_reason?: string
}

/** A template as Meta lists it, approved with one body parameter unless told otherwise. */
export const template = (
  fields: Partial<MetaTemplate> & { readonly id: string; readonly name: string }
): MetaTemplate => ({
  language: "en_US",
  status: "APPROVED",
  category: "UTILITY",
  components: [{ type: "BODY", text: "Hi {{1}}", example: { body_text: [["Ada"]] } }],
  quality_score: { score: "GREEN", date: 1732780800 },
  rejected_reason: "NONE",
  ...fields
})

/** One page of `GET /{waba_id}/message_templates`; `after` makes Meta's `paging.next`. */
export const listPage = (mockUrl: string, templates: ReadonlyArray<MetaTemplate>, after?: string): Reply =>
  Reply.raw(
    200,
    JSON.stringify({
      data: templates,
      paging: {
        cursors: { before: "QVFIUmx1WmNpbmJrZAE", after: after ?? "QVFIUkVuZAEZAW" },
        ...(after === undefined ? {} : { next: `${mockUrl}/v24.0/next-page?after=${after}&access_token=EAAG-leaked` })
      }
    })
  )

/** Meta's answer to a create. */
export const created = (id: string, status = "PENDING", category = "UTILITY"): Reply =>
  Reply.raw(200, JSON.stringify({ id, status, category }))

/** Meta's answer to a delete. */
export const deleted = (): Reply => Reply.raw(200, JSON.stringify({ success: true }))
