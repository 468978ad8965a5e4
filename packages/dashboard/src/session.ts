/**
 * Who is signed in: an account owner's full-access API key or the operator's token, kept in
 * `sessionStorage` (gone when the tab closes, never in the URL) and sent as a Bearer token.
 */
export type Session =
  | { readonly kind: "account"; readonly token: string; readonly role: string }
  | { readonly kind: "operator"; readonly token: string }

const KEY = "leadline.session"

export const load = (): Session | undefined => {
  const stored = sessionStorage.getItem(KEY)
  if (stored === null) return undefined
  try {
    return JSON.parse(stored) as Session
  } catch {
    return undefined
  }
}

export const save = (session: Session) => sessionStorage.setItem(KEY, JSON.stringify(session))

export const clear = () => sessionStorage.removeItem(KEY)
