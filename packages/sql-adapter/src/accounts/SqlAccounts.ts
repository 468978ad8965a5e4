import { Effect, Layer, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { type Account, PlanId, Role } from "@leadline/core/accounts/Account"
import { AccountsRepo } from "@leadline/core/accounts/AccountsRepo"
import { isUuid, orDie, Timestamp } from "../internal/store.ts"

// Rows described by Schema: no hot route reads them (auth reads api_keys; a lead names a user only when assigned).
const AccountRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  ownerUserId: Schema.String,
  planId: PlanId,
  createdAt: Timestamp
}).pipe(Schema.encodeKeys({ ownerUserId: "owner_user_id", planId: "plan_id", createdAt: "created_at" }))

const UserRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.String,
  role: Role,
  createdAt: Timestamp
}).pipe(Schema.encodeKeys({ accountId: "account_id", createdAt: "created_at" }))

const decodeAccounts = Schema.decodeUnknownEffect(Schema.Array(AccountRow))
const decodeUsers = Schema.decodeUnknownEffect(Schema.Array(UserRow))

/** Accounts and their users in SQL. */
export const layer = Layer.effect(
  AccountsRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    return AccountsRepo.of({
      insertAccount: (account, owner) =>
        orDie(
          Effect.andThen(
            sql`INSERT INTO accounts (id, name, owner_user_id, plan_id, subscription_status, created_at)
                VALUES (${account.id}, ${account.name}, ${account.ownerUserId}, ${account.planId},
                        ${account.subscriptionStatus}, ${account.createdAt}::timestamptz)`,
            sql`INSERT INTO users (id, account_id, role, created_at)
                VALUES (${owner.id}, ${owner.accountId}, ${owner.role}, ${owner.createdAt}::timestamptz)`
          )
        ).pipe(Effect.asVoid),
      setPlan: (accountId, planId) =>
        isUuid(accountId)
          ? orDie(sql`UPDATE accounts SET plan_id = ${planId} WHERE id = ${accountId}::uuid RETURNING id`).pipe(
              Effect.map((rows) => rows.length === 1)
            )
          : Effect.succeed(false),
      findAccount: (accountId) =>
        isUuid(accountId)
          ? orDie(
              Effect.flatMap(
                sql`SELECT id, name, owner_user_id, plan_id, created_at FROM accounts WHERE id = ${accountId}::uuid`,
                decodeAccounts
              )
            ).pipe(
              Effect.map(([row]): Account | undefined =>
                row === undefined ? undefined : { ...row, subscriptionStatus: "active" }
              )
            )
          : Effect.succeed(undefined),
      pageAccounts: (page) =>
        orDie(
          Effect.all([
            Effect.flatMap(
              sql`SELECT id, name, owner_user_id, plan_id, created_at FROM accounts
                  ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`,
              decodeAccounts
            ),
            sql<{ total: number }>`SELECT count(*)::int AS total FROM accounts`
          ])
        ).pipe(
          Effect.map(([rows, [count]]) => ({
            items: rows.map((row): Account => ({ ...row, subscriptionStatus: "active" })),
            total: count?.total ?? 0
          }))
        ),
      insertUser: (user) =>
        orDie(
          sql`INSERT INTO users (id, account_id, role, created_at)
              VALUES (${user.id}, ${user.accountId}, ${user.role}, ${user.createdAt}::timestamptz)`
        ).pipe(Effect.asVoid),
      findUser: (accountId, userId) =>
        // Ids that are not UUIDs cannot name a user; asking would only make PostgreSQL complain.
        isUuid(userId)
          ? orDie(
              Effect.flatMap(
                sql`
                SELECT id, account_id, role, created_at FROM users
                WHERE id = ${userId}::uuid AND account_id = ${accountId}::uuid`,
                decodeUsers
              )
            ).pipe(Effect.map(([row]) => row))
          : Effect.succeed(undefined),
      listUsers: (accountId) =>
        isUuid(accountId)
          ? orDie(
              Effect.flatMap(
                sql`SELECT id, account_id, role, created_at FROM users WHERE account_id = ${accountId}::uuid
                    ORDER BY created_at, id`,
                decodeUsers
              )
            )
          : Effect.succeed([])
    })
  })
)
