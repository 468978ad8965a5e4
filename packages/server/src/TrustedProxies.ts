import { Result, Schema } from "effect"
import * as IpNetwork from "effect/net/IpNetwork"
import * as NetAddress from "effect/net/NetAddress"

/** One entry: a network (`10.0.0.0/8`, `fd00::/8`) or a single address (`10.0.0.7`, `::1`). */
const network = (entry: string): Result.Result<IpNetwork.IpNetwork, string> => {
  if (entry.includes("/")) {
    const parsed = IpNetwork.fromString(entry)
    return Result.isSuccess(parsed)
      ? Result.succeed(parsed.success)
      : Result.fail(`${entry}: ${parsed.failure.message}`)
  }
  const address = NetAddress.ipFromString(entry)
  return Result.isSuccess(address)
    ? Result.succeed(IpNetwork.fromAddressUnsafe(address.success, NetAddress.width(address.success)))
    : Result.fail(`${entry}: not an IP address or network`)
}

/** The comma-separated list, or the first entry it cannot read. */
export const parse = (input: string): Result.Result<ReadonlyArray<IpNetwork.IpNetwork>, string> => {
  const networks: Array<IpNetwork.IpNetwork> = []
  for (const entry of input.split(",").map((part) => part.trim())) {
    if (entry === "") continue
    const parsed = network(entry)
    if (Result.isFailure(parsed)) return Result.fail(`LEADLINE_TRUSTED_PROXIES: ${parsed.failure}`)
    networks.push(parsed.success)
  }
  return Result.succeed(networks)
}

/**
 * `LEADLINE_TRUSTED_PROXIES`, checked at start: a malformed entry stops the server, naming it.
 * `networks` reads it for `Server.Options.trustedProxies`.
 */
export const Setting = Schema.String.check(
  Schema.makeFilter((input: string) => {
    const parsed = parse(input)
    return Result.isSuccess(parsed) || parsed.failure
  })
)

/** The networks of a checked setting. */
export const networks = (setting: string): ReadonlyArray<IpNetwork.IpNetwork> => Result.getOrThrow(parse(setting))
