import { createServer, type Server, type Socket, connect } from "node:net"

/**
 * A TCP proxy to a real server that a test can cut and restore: from the
 * client's side the database goes away (connections reset, new ones refused)
 * and comes back on the same address, without touching the database itself.
 */
export interface TcpProxy {
  readonly port: number
  readonly cut: () => Promise<void>
  readonly restore: () => Promise<void>
  readonly close: () => Promise<void>
}

export const start = async (target: { readonly host: string; readonly port: number }): Promise<TcpProxy> => {
  const sockets = new Set<Socket>()
  const make = () =>
    createServer((client) => {
      const upstream = connect(target.port, target.host)
      sockets.add(client).add(upstream)
      const end = () => {
        client.destroy()
        upstream.destroy()
        sockets.delete(client)
        sockets.delete(upstream)
      }
      client.on("error", end).on("close", end)
      upstream.on("error", end).on("close", end)
      client.pipe(upstream).pipe(client)
    })
  const listen = (server: Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject)
      server.listen(port, "127.0.0.1", () => resolve((server.address() as { port: number }).port))
    })
  const shut = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()))

  let server = make()
  const port = await listen(server, 0)
  let open = true
  return {
    port,
    cut: async () => {
      if (!open) return
      open = false
      for (const socket of sockets) socket.destroy()
      sockets.clear()
      await shut(server)
    },
    restore: async () => {
      if (open) return
      server = make()
      await listen(server, port)
      open = true
    },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      if (open) await shut(server)
      open = false
    }
  }
}
