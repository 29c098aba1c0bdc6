#!/usr/bin/python3
"""Deposits into an account: each deposit's row and its event in one
transaction, appended with outbox_append.

    deposit.py URI ACCOUNT CENTS...
"""
import json
import sys

import psycopg2  # Debian: python3-psycopg2


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    uri, account = sys.argv[1], sys.argv[2]
    conn = psycopg2.connect(uri)
    try:
        for cents in (int(c) for c in sys.argv[3:]):
            # One transaction per deposit: `with conn` commits it, or rolls
            # it back on an exception; the row and its event go together.
            with conn, conn.cursor() as cur:
                cur.execute(
                    "INSERT INTO deposits (account, cents)"
                    " VALUES (%s, %s) RETURNING id",
                    (account, cents))
                (deposit,) = cur.fetchone()
                cur.execute(
                    "SELECT seq FROM outbox_append(%s, 'MoneyDeposited', %s,"
                    " headers => %s)",
                    (account, json.dumps({"deposit": deposit, "cents": cents}),
                     json.dumps({"tenant": "acme"})))
                (seq,) = cur.fetchone()
            print(f"{account} #{seq} MoneyDeposited {cents}")
    finally:
        conn.close()


if __name__ == "__main__":
    main()
