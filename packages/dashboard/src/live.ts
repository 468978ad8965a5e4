import { useEffect, useRef } from "preact/hooks"

/**
 * The account's events as the page hears them: the envelope of the webhooks (docs/contract.md),
 * of which the pages read `type` and `data.id`.
 */
export interface LiveEvent {
  readonly id: string
  readonly type: string
  readonly data: { readonly id?: string; readonly conversation_id?: string }
}

type Listener = (event: LiveEvent) => void

const listeners = new Set<Listener>()

/**
 * Where the account's event stream (`GET /api/v1/stream`, followed by `stream.ts` while an account
 * is signed in) hands each event it receives: every page subscribed with `onEvent` hears it. The
 * pages never poll.
 */
export const publish = (event: LiveEvent) => {
  for (const listener of listeners) listener(event)
}

/** Hears every event published; the function returned stops it. */
export const onEvent = (listener: Listener): (() => void) => {
  listeners.add(listener)
  return () => {
    listeners.delete(listener)
  }
}

/** A component's subscription, for as long as it is mounted: the latest `listener` is called. */
export const useEvents = (listener: Listener) => {
  const latest = useRef(listener)
  latest.current = listener
  useEffect(() => onEvent((event) => latest.current(event)), [])
}

/** Whether an event changes what an inbox shows: a conversation's or a message's. */
export const touchesInbox = (event: LiveEvent) =>
  event.type.startsWith("conversation.") || event.type.startsWith("message.")
