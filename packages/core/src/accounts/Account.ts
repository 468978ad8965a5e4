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

export const AccountName = Text.check(
  Schema.isMinLength(1, { message: "name must not be empty" }),
  Schema.isMaxLength(200, { message: "name must be at most 200 characters" })
)
