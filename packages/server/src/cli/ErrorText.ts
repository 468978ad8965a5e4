/** A one-line reason for a failure, for messages a person reads. */
export const describe = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  // Node's fetch hides the useful part ("connect ECONNREFUSED …") in `cause`.
  const cause: unknown = error.cause
  if (cause instanceof Error) {
    const code = (cause as { readonly code?: unknown }).code
    if (cause.message !== "") return cause.message
    if (typeof code === "string") return code
  }
  if (error.message !== "") return error.message
  return "_tag" in error && typeof error._tag === "string" ? error._tag : error.name
}
