/**
 * Which IP addresses a webhook may be sent to: public unicast only. Used at
 * registration (for IP literals) and again at connect time, after DNS, for
 * every address a name resolves to.
 */

const parseIpv4 = (text: string): ReadonlyArray<number> | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  const octets = parts.map((part) => (/^\d{1,3}$/.test(part) ? Number(part) : Number.NaN))
  return octets.every((octet) => octet >= 0 && octet <= 255) ? octets : undefined
}

/** Eight 16-bit groups, or undefined when `text` is not an IPv6 address. */
const parseIpv6 = (text: string): ReadonlyArray<number> | undefined => {
  let address = text.toLowerCase()
  const zone = address.indexOf("%")
  if (zone >= 0) address = address.slice(0, zone)
  // A trailing dotted quad (::ffff:1.2.3.4) becomes two groups.
  const lastColon = address.lastIndexOf(":")
  const tail = address.slice(lastColon + 1)
  if (tail.includes(".")) {
    const v4 = parseIpv4(tail)
    if (v4 === undefined) return undefined
    address = `${address.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`
  }
  const halves = address.split("::")
  if (halves.length > 2) return undefined
  const read = (part: string) => (part === "" ? [] : part.split(":"))
  const head = read(halves[0]!)
  const rest = halves.length === 2 ? read(halves[1]!) : []
  const missing = 8 - head.length - rest.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...rest]
  if (!groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined
  return groups.map((group) => Number.parseInt(group, 16))
}

const inV4 = (octets: ReadonlyArray<number>, base: string, bits: number): boolean => {
  const network = parseIpv4(base)!
  const value = (o: ReadonlyArray<number>) => ((o[0]! << 24) | (o[1]! << 16) | (o[2]! << 8) | o[3]!) >>> 0
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0
  return (value(octets) & mask) === (value(network) & mask)
}

// Loopback, private, shared, link-local, documentation, benchmarking, multicast, reserved.
const V4_BLOCKED: ReadonlyArray<readonly [string, number]> = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4]
]

const isPublicV4 = (octets: ReadonlyArray<number>) => !V4_BLOCKED.some(([base, bits]) => inV4(octets, base, bits))

const isPublicV6 = (groups: ReadonlyArray<number>): boolean => {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number]
  const embeddedV4 = [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff]
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0) {
    // ::, ::1, ::a.b.c.d (compatible) and ::ffff:a.b.c.d (mapped) are judged by their IPv4 part.
    if (g5 === 0xffff || g5 === 0) return g5 === 0 && g6 === 0 ? false : isPublicV4(embeddedV4)
    return false
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return isPublicV4(embeddedV4)
  if ((g0 & 0xfe00) === 0xfc00) return false // unique local fc00::/7
  if ((g0 & 0xffc0) === 0xfe80) return false // link-local fe80::/10
  if ((g0 & 0xff00) === 0xff00) return false // multicast
  if (g0 === 0x2001 && g1 === 0x0db8) return false // documentation
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return false // discard-only
  return true
}

/** Whether `ip` (v4 or v6, optionally in brackets) is a literal IP address. */
export const isIpLiteral = (ip: string): boolean => {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip
  return parseIpv4(bare) !== undefined || parseIpv6(bare) !== undefined
}

/** Whether a webhook may be delivered to `ip`; anything that does not parse is refused. */
export const isPublicAddress = (ip: string): boolean => {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip
  const v4 = parseIpv4(bare)
  if (v4 !== undefined) return isPublicV4(v4)
  const v6 = parseIpv6(bare)
  return v6 !== undefined && isPublicV6(v6)
}
