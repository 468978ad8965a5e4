import { promises as dns, type LookupAddress } from "node:dns"
import type { LookupFunction } from "node:net"
import { Context } from "effect"
import { isPublicAddress } from "@leadline/core/outbound/Addresses"

export interface ResolverShape {
  readonly lookup: (host: string) => Promise<ReadonlyArray<LookupAddress>>
}

/** How host names become addresses; tests swap in a fixed table, since no DNS server is reachable there. */
export const Resolver = Context.Reference<ResolverShape>("webhook-worker/Resolver", {
  defaultValue: () => ({ lookup: (host) => dns.lookup(host, { all: true, verbatim: true }) })
})

export class RefusedAddress extends Error {
  readonly code = "ERR_LEADLINE_REFUSED_ADDRESS"
}

/**
 * A `lookup` for sockets that resolves the name once, refuses it when any
 * address is private or internal, and hands the socket the very addresses it
 * checked: the connection cannot go anywhere the check did not see.
 */
export const make = (resolver: ResolverShape, options: { readonly allowPrivate: boolean }): LookupFunction =>
  ((hostname: string, lookupOptions: { all?: boolean }, callback: (...args: Array<unknown>) => void) => {
    resolver.lookup(hostname).then(
      (addresses) => {
        if (addresses.length === 0) return callback(new Error(`${hostname} has no address`))
        const refused = options.allowPrivate ? undefined : addresses.find((entry) => !isPublicAddress(entry.address))
        if (refused !== undefined) {
          return callback(
            new RefusedAddress(`refused: ${hostname} resolves to ${refused.address}, a private or internal address`)
          )
        }
        if (lookupOptions.all === true) return callback(null, addresses)
        return callback(null, addresses[0]!.address, addresses[0]!.family)
      },
      (error: unknown) => callback(error)
    )
  }) as LookupFunction
