/**
 * The streams' side of `bench:stream`, in a process of its own: it opens the connections, parses
 * every message, and says when each stream received each lead's `lead.created`. Apart from the
 * process that times the API, so the API's latency is not the time this one spends parsing a
 * thousand streams (its parsing is still in the events' delays, which it measures).
 *
 * Messages (Node IPC): `{open: {baseUrl, adminToken, key, connections}}` → `{opened: n}`;
 * `{collect: {ids, lastId}}` → `{received: [[leadId, absolute ms]…] per stream}`; `{close: true}`.
 */
import * as StreamReader from "@leadline/testkit/eventlog/StreamReader"

const streams: Array<StreamReader.StreamReader> = []
// Absolute times, comparable with the other process's: both read the same clock.
const absolute = (at: number) => performance.timeOrigin + at

process.on("message", async (message: any) => {
  if (message.open !== undefined) {
    const { baseUrl, adminToken, key, connections } = message.open
    for (let i = 0; i < connections; i += 100) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(100, connections - i) }, () => StreamReader.open({ baseUrl, adminToken }, key))
      )
      for (const stream of batch) {
        if (stream.status !== 200) throw new Error(`GET /api/v1/stream: ${stream.status}`)
        streams.push(stream)
      }
    }
    await Promise.all(streams.map((stream) => stream.until((frame) => frame.comment === "open", 30_000)))
    process.send!({ opened: streams.length })
  } else if (message.collect !== undefined) {
    const { ids, lastId } = message.collect as { ids: ReadonlyArray<string>; lastId: string }
    const wanted = new Set(ids)
    await Promise.all(streams.map((stream) => stream.until((frame) => frame.data?.includes(lastId) === true, 60_000)))
    const received = streams.map((stream) => {
      const seen: Array<[string, number]> = []
      for (const frame of stream.frames) {
        if (frame.event !== "lead.created" || frame.data === undefined) continue
        const leadId = (JSON.parse(frame.data) as { data: { id: string } }).data.id
        if (wanted.has(leadId)) seen.push([leadId, absolute(frame.at)])
      }
      return seen
    })
    process.send!({ received })
  } else if (message.close !== undefined) {
    for (const stream of streams) stream.close()
    process.send!({ closed: true }, () => process.exit(0))
  }
})
