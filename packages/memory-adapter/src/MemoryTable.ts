import type { Listed, Page } from "@leadline/core/Pagination"
import type { Tx } from "./MemoryTransaction.ts"

/**
 * How an index keeps its rows. `compare` ranks rows ascending; rows it ranks
 * equal keep the order they were inserted in. `descending` reads the index
 * backwards (newest first), which also puts the later of two equal rows first.
 * Rows are stored ascending, so the usual write (a row newer than the rest) is an append.
 */
export interface Order<Row> {
  readonly compare: (a: Row, b: Row) => number
  readonly descending: boolean
}

/** Insertion order, oldest first: what a table without `order` keeps. */
export const insertion: Order<unknown> = { compare: () => 0, descending: false }

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Oldest first: `createdAt` asc (ISO text), then `id` asc. Without `id` (ids that do not sort
 * by time), rows created in the same instant keep their insertion order.
 */
export const oldestFirst = <Row>(createdAt: (row: Row) => string, id?: (row: Row) => string): Order<Row> => ({
  compare:
    id === undefined
      ? (a, b) => compareStrings(createdAt(a), createdAt(b))
      : (a, b) => compareStrings(createdAt(a), createdAt(b)) || compareStrings(id(a), id(b)),
  descending: false
})

/**
 * Newest first, as the list endpoints serve: `oldestFirst` read backwards, so rows created in
 * the same instant without an `id` come latest inserted first.
 */
export const newestFirst = <Row>(createdAt: (row: Row) => string, id?: (row: Row) => string): Order<Row> => ({
  ...oldestFirst(createdAt, id),
  descending: true
})

/** Smallest `by` first; ties in insertion order. */
export const ascending = <Row>(by: (row: Row) => number): Order<Row> => ({
  compare: (a, b) => by(a) - by(b),
  descending: false
})

/**
 * A lookup by key: every row with the same key, in the table's `order` or its
 * own. A row whose key is undefined is left out, as in a partial index.
 */
export type Index<Row> =
  | ((row: Row) => string | undefined)
  | { readonly key: (row: Row) => string | undefined; readonly order: Order<Row> }

export interface Options<Row, U extends string, I extends string> {
  /** The row's identity. Inserting a second row with the same one is a defect, as it would be in SQL. */
  readonly primaryKey: (row: Row) => string
  /** Unique constraints by name: no two rows share a key (undefined: the row is not constrained). */
  readonly unique?: { readonly [K in U]: (row: Row) => string | undefined }
  readonly indexes?: { readonly [K in I]: Index<Row> }
  /** The order of every index that names none; insertion order unless given. */
  readonly order?: Order<Row>
}

/** A write refused because another row holds `key` under the unique constraint `constraint`. */
export class Violation<U extends string = string> {
  readonly _tag = "Violation"
  readonly constraint: U
  readonly key: string
  constructor(constraint: U, key: string) {
    this.constraint = constraint
    this.key = key
  }
}

/** `A`, or the violation that refused the write when the table has unique constraints. */
export type Written<U extends string, A> = [U] extends [never] ? A : A | Violation<U>

/**
 * Rows in memory with what a SQL table gives a store: unique constraints,
 * indexes kept in order for lookups and pages, and writes that roll back with
 * the transaction (`Tx`, from `MemoryTransaction.atomically`). Reads are plain
 * calls; do the reads and writes of one operation in one `atomically` step.
 *
 * Concurrent transactions are not isolated from each other (memory has no row
 * locks), so an undo step leaves alone a row another fiber has written since.
 */
export interface MemoryTable<Row, U extends string = never, I extends string = never> {
  readonly size: number
  readonly get: (primaryKey: string) => Row | undefined
  /** The row holding `key` under a unique constraint. */
  readonly find: (constraint: U, key: string) => Row | undefined
  /** The rows under `key` in the index's order. Do not write to the table while iterating. */
  readonly scan: (index: I, key: string) => IterableIterator<Row>
  /**
   * A page of the rows under `key` in the index's order and their total. Reads
   * only the page, unless `where` filters the rows: then every row under `key`.
   */
  readonly page: (index: I, key: string, page: Page, where?: (row: Row) => boolean) => Listed<Row>
  /** Every row, in insertion order. */
  readonly rows: () => IterableIterator<Row>
  /** Adds the row; on a violation nothing is written. */
  readonly insert: (tx: Tx, row: Row) => Written<U, void>
  /**
   * Replaces the row with the same primary key and returns the one it replaced;
   * undefined when there was none. On a violation nothing is written.
   */
  readonly update: (tx: Tx, row: Row) => Written<U, Row | undefined>
  /** Deletes the row and returns it; undefined when there was none. */
  readonly remove: (tx: Tx, primaryKey: string) => Row | undefined
}

/** Joins the parts of a composite key (account id and phone, say) without ambiguity. */
export const key = (...parts: ReadonlyArray<string>): string => parts.join("\u0000")

export const make = <Row, U extends string = never, I extends string = never>(
  options: Options<Row, U, I>
): MemoryTable<Row, U, I> => new Table(options) as unknown as MemoryTable<Row, U, I>

interface Entry<Row> {
  readonly row: Row
  /** When the row was first inserted; an update keeps it. */
  readonly seq: number
}

const EMPTY: ReadonlyArray<never> = []

class OrderedIndex<Row> {
  readonly buckets = new Map<string, Array<Entry<Row>>>()
  readonly key: (row: Row) => string | undefined
  readonly order: Order<Row>

  constructor(key: (row: Row) => string | undefined, order: Order<Row>) {
    this.key = key
    this.order = order
  }

  compare(a: Entry<Row>, b: Entry<Row>): number {
    return this.order.compare(a.row, b.row) || a.seq - b.seq
  }

  /** Where `entry` is, or belongs, in the bucket: the entries are distinct under `compare`. */
  position(bucket: ReadonlyArray<Entry<Row>>, entry: Entry<Row>): number {
    let low = 0
    let high = bucket.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (this.compare(bucket[mid]!, entry) < 0) low = mid + 1
      else high = mid
    }
    return low
  }

  add(entry: Entry<Row>): void {
    const key = this.key(entry.row)
    if (key === undefined) return
    const bucket = this.buckets.get(key)
    if (bucket === undefined) this.buckets.set(key, [entry])
    else if (this.compare(bucket[bucket.length - 1]!, entry) < 0) bucket.push(entry)
    else bucket.splice(this.position(bucket, entry), 0, entry)
  }

  delete(entry: Entry<Row>): void {
    const key = this.key(entry.row)
    if (key === undefined) return
    const bucket = this.buckets.get(key)
    if (bucket === undefined) return
    const at = this.position(bucket, entry)
    if (bucket[at] !== entry) return
    bucket.splice(at, 1)
    if (bucket.length === 0) this.buckets.delete(key)
  }

  replace(before: Entry<Row>, after: Entry<Row>): void {
    const key = this.key(before.row)
    // Same key and same rank (a status change, say): the entry keeps its place.
    if (key !== undefined && key === this.key(after.row) && this.order.compare(before.row, after.row) === 0) {
      const bucket = this.buckets.get(key)!
      bucket[this.position(bucket, before)] = after
      return
    }
    this.delete(before)
    this.add(after)
  }

  *scan(key: string): IterableIterator<Row> {
    const bucket = this.buckets.get(key) ?? EMPTY
    if (this.order.descending) for (let i = bucket.length - 1; i >= 0; i--) yield bucket[i]!.row
    else for (const entry of bucket) yield entry.row
  }

  page(key: string, page: Page, where: ((row: Row) => boolean) | undefined): Listed<Row> {
    const bucket = this.buckets.get(key) ?? EMPTY
    const items: Array<Row> = []
    const descending = this.order.descending
    if (where === undefined) {
      const total = bucket.length
      if (descending) {
        for (let i = total - 1 - page.offset; i >= 0 && items.length < page.limit; i--) items.push(bucket[i]!.row)
      } else {
        for (let i = page.offset; i < total && items.length < page.limit; i++) items.push(bucket[i]!.row)
      }
      return { items, total }
    }
    let total = 0
    for (let n = 0; n < bucket.length; n++) {
      const row = bucket[descending ? bucket.length - 1 - n : n]!.row
      if (!where(row)) continue
      if (total >= page.offset && items.length < page.limit) items.push(row)
      total++
    }
    return { items, total }
  }
}

interface UniqueIndex<Row> {
  readonly name: string
  readonly key: (row: Row) => string | undefined
  readonly holders: Map<string, Entry<Row>>
}

class Table<Row> {
  readonly #primaryKey: (row: Row) => string
  readonly #rows = new Map<string, Entry<Row>>()
  readonly #unique: ReadonlyArray<UniqueIndex<Row>>
  readonly #indexes: ReadonlyMap<string, OrderedIndex<Row>>
  #seq = 0

  constructor(options: Options<Row, string, string>) {
    this.#primaryKey = options.primaryKey
    this.#unique = Object.entries<(row: Row) => string | undefined>(options.unique ?? {}).map(([name, key]) => ({
      name,
      key,
      holders: new Map()
    }))
    const order: Order<Row> = options.order ?? insertion
    this.#indexes = new Map(
      Object.entries<Index<Row>>(options.indexes ?? {}).map(([name, index]) => [
        name,
        typeof index === "function" ? new OrderedIndex(index, order) : new OrderedIndex(index.key, index.order)
      ])
    )
  }

  get size(): number {
    return this.#rows.size
  }

  get(primaryKey: string): Row | undefined {
    return this.#rows.get(primaryKey)?.row
  }

  find(constraint: string, key: string): Row | undefined {
    return this.#unique.find((unique) => unique.name === constraint)?.holders.get(key)?.row
  }

  scan(index: string, key: string): IterableIterator<Row> {
    return this.#index(index).scan(key)
  }

  page(index: string, key: string, page: Page, where?: (row: Row) => boolean): Listed<Row> {
    return this.#index(index).page(key, page, where)
  }

  *rows(): IterableIterator<Row> {
    for (const entry of this.#rows.values()) yield entry.row
  }

  insert(tx: Tx, row: Row): Violation | undefined {
    const primaryKey = this.#primaryKey(row)
    if (this.#rows.has(primaryKey)) throw new Error(`MemoryTable: a row with primary key ${primaryKey} exists`)
    const violation = this.#violation(row, undefined)
    if (violation !== undefined) return violation
    const entry: Entry<Row> = { row, seq: this.#seq++ }
    this.#attach(entry)
    tx.onRollback(() => {
      if (this.#rows.get(primaryKey) === entry) this.#detach(entry)
    })
    return undefined
  }

  update(tx: Tx, row: Row): Row | Violation | undefined {
    const primaryKey = this.#primaryKey(row)
    const before = this.#rows.get(primaryKey)
    if (before === undefined) return undefined
    const violation = this.#violation(row, before)
    if (violation !== undefined) return violation
    const after: Entry<Row> = { row, seq: before.seq }
    this.#replace(before, after)
    tx.onRollback(() => {
      if (this.#rows.get(primaryKey) === after && this.#violation(before.row, after) === undefined) {
        this.#replace(after, before)
      }
    })
    return before.row
  }

  remove(tx: Tx, primaryKey: string): Row | undefined {
    const before = this.#rows.get(primaryKey)
    if (before === undefined) return undefined
    this.#detach(before)
    tx.onRollback(() => {
      if (!this.#rows.has(primaryKey) && this.#violation(before.row, undefined) === undefined) this.#attach(before)
    })
    return before.row
  }

  #index(name: string): OrderedIndex<Row> {
    const index = this.#indexes.get(name)
    if (index === undefined) throw new Error(`MemoryTable: no index named ${name}`)
    return index
  }

  /** The first unique constraint `row` would break, not counting the entry it replaces. */
  #violation(row: Row, self: Entry<Row> | undefined): Violation | undefined {
    for (const unique of this.#unique) {
      const key = unique.key(row)
      if (key === undefined) continue
      const holder = unique.holders.get(key)
      if (holder !== undefined && holder !== self) return new Violation(unique.name, key)
    }
    return undefined
  }

  #attach(entry: Entry<Row>): void {
    this.#rows.set(this.#primaryKey(entry.row), entry)
    for (const unique of this.#unique) {
      const key = unique.key(entry.row)
      if (key !== undefined) unique.holders.set(key, entry)
    }
    for (const index of this.#indexes.values()) index.add(entry)
  }

  #detach(entry: Entry<Row>): void {
    this.#rows.delete(this.#primaryKey(entry.row))
    for (const unique of this.#unique) {
      const key = unique.key(entry.row)
      if (key !== undefined && unique.holders.get(key) === entry) unique.holders.delete(key)
    }
    for (const index of this.#indexes.values()) index.delete(entry)
  }

  #replace(before: Entry<Row>, after: Entry<Row>): void {
    this.#rows.set(this.#primaryKey(after.row), after)
    for (const unique of this.#unique) {
      const old = unique.key(before.row)
      if (old !== undefined && unique.holders.get(old) === before) unique.holders.delete(old)
      const key = unique.key(after.row)
      if (key !== undefined) unique.holders.set(key, after)
    }
    for (const index of this.#indexes.values()) index.replace(before, after)
  }
}
