import type { ComponentChildren } from "preact"

/**
 * An http(s) address in a text: up to a space or a quote, less the punctuation a sentence ends it
 * with. Nothing else becomes a link: `javascript:`, `data:`, `vbscript:` and every other scheme stay text.
 * Captured, so that splitting a text by it keeps the addresses, at its odd places.
 */
const ADDRESS = /\b(https?:\/\/[^\s<>"]*[^\s<>"'.,;:!?)\]}])/i

/** A text cut around its http(s) addresses: plain runs at the even places, addresses at the odd ones. */
export const linkPieces = (text: string): ReadonlyArray<string> => text.split(ADDRESS)

/**
 * A link out of the dashboard, for an http(s) address only (else its text alone): a new tab that
 * gets neither this page (`opener`) nor its address (`referrer`).
 */
export const Outward = (props: { href: string; children: ComponentChildren }) =>
  /^https?:\/\//i.test(props.href) ? (
    <a href={props.href} rel="noopener noreferrer" target="_blank">
      {props.children}
    </a>
  ) : (
    props.children
  )

/** Someone's text as text (never as HTML), its http(s) addresses as links. */
export const Linked = (props: { text: string }) =>
  linkPieces(props.text).map((piece, place) => (place % 2 === 0 ? piece : <Outward href={piece}>{piece}</Outward>))
