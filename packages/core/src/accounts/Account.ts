import { Schema } from "effect"
import { Text } from "../Text.ts"

export const PLANS = { free: 1000, pro: 10000, scale: 100000 } as const
export const PlanId = Schema.Literals(["free", "pro", "scale"]).annotate({
  identifier: "PlanId",
  description: "free: 1,000 messages a month; pro: 10,000; scale: 100,000"
})
export type PlanId = typeof PlanId.Type
export const DEFAULT_PLAN: PlanId = "free"

export const Role = Schema.Literals(["owner", "admin", "member"])
export type Role = typeof Role.Type

/** Roles an operator can give to an added user; the owner is made with the account. */
export const MemberRole = Schema.Literals(["admin", "member"])

export interface Account {
  readonly id: string
  readonly name: string
  readonly ownerUserId: string
  readonly planId: PlanId
  readonly subscriptionStatus: "active"
  readonly createdAt: string
}

export interface User {
  readonly id: string
  readonly accountId: string
  readonly role: Role
  readonly createdAt: string
}

/** A user as the API shows it: the operator's account detail and the account's own `GET /api/users`. */
export const AccountUser = Schema.Struct({ id: Schema.String, role: Role, created_at: Schema.String }).annotate({
  identifier: "AccountUser"
})

export const accountUser = (user: User): typeof AccountUser.Type => ({
  id: user.id,
  role: user.role,
  created_at: user.createdAt
})

export const AccountName = Text.check(
  Schema.isMinLength(1, { message: "name must not be empty" }),
  Schema.isMaxLength(200, { message: "name must be at most 200 characters" })
)
