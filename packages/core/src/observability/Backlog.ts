/** What waits in a queue (the webhook outbox, the sender's messages) at a moment: how many are due, and since when. */
export interface Backlog {
  readonly due: number
  /** When the longest-waiting due item fell due (epoch ms); undefined when none is due. */
  readonly oldestDueAt: number | undefined
}
