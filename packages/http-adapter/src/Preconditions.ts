import { Schema } from "effect"

/**
 * The `If-Match` request header of a PATCH on a versioned resource: `"<version>"` as the ETag of
 * a read gave it, or `*`. Without it the write is last-writer-wins for plain fields (status moves
 * are still checked on the locked row).
 */
export const IfMatchHeaders = {
  "if-match": Schema.optional(
    Schema.String.annotate({
      description: 'Apply the change only to this version: the `ETag` of a read (`"3"`), or `*`; 412 otherwise'
    })
  )
}
