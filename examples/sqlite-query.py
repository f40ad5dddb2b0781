# args: --input examples/data/shop.sqlite
# Query a SQLite file given as input (read-only), with the standard library's sqlite3.
# Run: forge-host run examples/sqlite-query.py --input examples/data/shop.sqlite
import sqlite3

import forge

path = forge.input_path("shop.sqlite")
db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
top = db.execute(
    """
    SELECT c.name, c.city, COUNT(o.id) AS orders, ROUND(SUM(o.total), 2) AS spent
    FROM customers c JOIN orders o ON o.customer_id = c.id
    GROUP BY c.id ORDER BY spent DESC LIMIT 3
    """
).fetchall()
cities = forge.read_table("shop.sqlite", table="customers")
forge.result({
    "top_customers": [dict(zip(["name", "city", "orders", "spent"], row)) for row in top],
    "customers": len(cities),
})
