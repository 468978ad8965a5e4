import { type Api, DROPPED, HUNG, type Reply, sleep } from "./Api.ts"

/**
 * Creating POSTs as a careful client makes them: one `Idempotency-Key` per intended create,
 * retried with it until answered (a dropped connection, a 5xx, a twin still running), sometimes
 * sent to two servers at once, sometimes replayed once answered. The ledger holds what each key
 * made, so a key that made two things, or a replay that was not the original, is seen.
 */
export class Ledger {
  /** Key → the id its create answered. */
  readonly ids = new Map<string, string>()
  readonly violations: Array<string> = []
  twins = 0
  replays = 0

  record(key: string, id: string) {
    const previous = this.ids.get(key)
    if (previous !== undefined && previous !== id) this.violations.push(`key ${key} made ${previous} and ${id}`)
    this.ids.set(key, id)
  }
}

const retryable = (reply: Reply) =>
  reply.status === DROPPED ||
  reply.status === HUNG ||
  reply.status >= 500 ||
  (reply.status === 409 && reply.body?.code === "idempotency_in_progress")

export const create = async (
  api: Api,
  ledger: Ledger,
  options: {
    readonly path: string
    readonly route: string
    readonly auth: string
    readonly key: string
    readonly body?: unknown
    /** Also sent to a second server at the same moment: one of the twins must wait or replay. */
    readonly twins?: boolean
    /** Sent again once answered: the same answer, marked as a replay. */
    readonly replay?: boolean
    /** Retries stop here (the run's end plus a grace): the answer so far is returned. */
    readonly giveUpAt: number
  }
): Promise<Reply> => {
  const send = (server = api.pick()) =>
    api.request("POST", options.path, {
      auth: options.auth,
      json: options.body ?? {},
      headers: { "idempotency-key": options.key },
      server,
      route: options.route
    })
  const take = (reply: Reply) => {
    if ((reply.status === 200 || reply.status === 201) && typeof reply.body?.id === "string") {
      ledger.record(options.key, reply.body.id)
    }
  }
  let last: Reply | undefined
  const live = api.live()
  if (options.twins === true && live.length >= 2) {
    ledger.twins++
    const [a, b] = live.sort(() => Math.random() - 0.5)
    const replies = await Promise.all([send(a), send(b)])
    for (const reply of replies) take(reply)
    last = replies.find((reply) => !retryable(reply))
  }
  while (last === undefined || retryable(last)) {
    if (last !== undefined) {
      if (Date.now() > options.giveUpAt) return last
      await sleep(200)
    }
    last = await send()
    take(last)
  }
  if (options.replay === true && (last.status === 200 || last.status === 201)) {
    const again = await send()
    if (again.status === last.status) {
      ledger.replays++
      if (!again.replayed || again.body?.id !== last.body?.id) {
        ledger.violations.push(`replay of ${options.key} was not the original`)
      }
    }
  }
  return last
}
