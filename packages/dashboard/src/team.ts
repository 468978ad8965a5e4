/** A user of the account as `GET /api/users` lists it. */
export interface User {
  readonly id: string
  readonly role: "owner" | "admin" | "member"
}

/** The account's users as the inbox offers them: the signed-in one first, as "Me". */
export interface Team {
  readonly me: string | undefined
  readonly users: ReadonlyArray<User>
}

const ROLES = { owner: "Owner", admin: "Admin", member: "Member" } as const

/**
 * What the page calls a user. A user has an id and a role only (docs/contract.md, "Account,
 * usage"), so a teammate is their role and the start of their id, as the API names them; the
 * signed-in user is "Me".
 */
export const nameOf = (team: Team, id: string): string => {
  if (id === team.me) return "Me"
  const user = team.users.find((candidate) => candidate.id === id)
  return user === undefined ? `User ${id.slice(0, 8)}` : `${ROLES[user.role]} ${id.slice(0, 8)}`
}

/** The users to pick from: the signed-in one first, then the others oldest first. */
export const choices = (team: Team): ReadonlyArray<{ readonly id: string; readonly name: string }> =>
  [...team.users]
    .sort((a, b) => Number(b.id === team.me) - Number(a.id === team.me))
    .map((user) => ({ id: user.id, name: nameOf(team, user.id) }))
