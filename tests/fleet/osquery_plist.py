#!/usr/bin/env python3
"""A port of osquery's `plist` table, to run pkg/fleet/metalcap.sql as
osquery would, over property lists that metalcapd really wrote.

osquery itself is not run (it is not packaged for Debian); this follows
its source, osquery/osquery at a5b14f63d98c0d4992ab8ae07d933e0d5ff008df:

- osquery/utils/darwin/plist.mm: parsePlist -> filterPlist (a root dict
  through filterDictionary; a root array becomes key "root"; root data
  key "data"; any other root is an error, no rows), filterDictionary
  (non-string keys skipped; an array value goes through filterArray under
  its key), filterArray (every element keyed "", a nested array wrapped
  once more), getValue (leaf to string);
- osquery/tables/system/darwin/preferences.cpp: genOSXPlist (one row set
  per top-level key, subkey "") and genOSXPlistPrefValue (a leaf or an
  empty container is a row; below it, "/" joins keys, and an element keyed
  "" gets the counter `level`, only when subkey is already non-empty: the
  elements of an array straight under a top-level key get no index).

usage:
  osquery_plist.py rows PLIST...           the rows, one JSON array
  osquery_plist.py query SQL USER=HOME...  each query of SQL (";"
      separated) over tables `users (username, directory)` and
      `plist (key, subkey, value, path)`, the latter filled from each
      user's status.plist; prints one JSON array of row lists
"""
import base64
import datetime
import json
import plistlib
import sqlite3
import sys

_EPOCH = datetime.datetime(1970, 1, 1)
STATUS = "/Library/Application Support/metalcap/state/status.plist"


class Node:
    """boost::property_tree::ptree: string data, (key, Node) children."""
    __slots__ = ("data", "children")

    def __init__(self, data=""):
        self.data = data
        self.children = []


def get_value(v):
    """plist.mm getValue()."""
    if isinstance(v, str):
        return v.split("\x00", 1)[0]        # UTF8String: a C string
    if isinstance(v, bool):
        return "1" if v else "0"            # a CFBoolean is an NSNumber
    if isinstance(v, int):
        return str(v)                       # NSNumber stringValue
    if isinstance(v, float):
        return "%.16g" % v                  # stringValue (Foundation's)
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, datetime.datetime):    # timeIntervalSince1970
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return "%.16g" % (v - _EPOCH).total_seconds()
    return ""


def filter_dictionary(d, tree):
    """plist.mm filterDictionary()."""
    for key, value in d.items():
        if not isinstance(key, str):
            continue
        if isinstance(value, list):
            filter_array(value, key, tree)
        elif isinstance(value, dict):
            child = Node()
            filter_dictionary(value, child)
            tree.children.append((key, child))
        else:
            tree.children.append((key, Node(get_value(value))))


def filter_array(values, root, tree):
    """plist.mm filterArray()."""
    elements = Node()
    for value in values:
        child = Node()
        if isinstance(value, list):
            filter_array(value, "", child)
        elif isinstance(value, dict):
            filter_dictionary(value, child)
        else:
            child.data = get_value(value)
        elements.children.append(("", child))
    tree.children.append((root, elements))


def filter_plist(obj):
    """plist.mm filterPlist(); None: "Unexpected plist type", no rows."""
    tree = Node()
    if isinstance(obj, dict):
        filter_dictionary(obj, tree)
    elif isinstance(obj, list):
        filter_array(obj, "root", tree)
    elif isinstance(obj, (bytes, bytearray)):
        tree.children.append(("data", Node(get_value(obj))))
    else:
        return None
    return tree


def gen_pref_value(tree, base, level, results):
    """preferences.cpp genOSXPlistPrefValue()."""
    if not tree.children:
        row = dict(base)
        row["value"] = tree.data
        results.append(row)
        return
    for key, child in tree.children:
        row = dict(base)
        if len(row["subkey"]) > 0:
            row["subkey"] += "/"
            if len(key) == 0:
                row["subkey"] += str(level)
                level += 1
        row["subkey"] += key
        gen_pref_value(child, row, level, results)


def plist_rows(path):
    """preferences.cpp genOSXPlist(), for one path: unreadable, none."""
    try:
        with open(path, "rb") as f:
            obj = plistlib.load(f)
    except (OSError, plistlib.InvalidFileException, ValueError):
        return []
    tree = filter_plist(obj)
    if tree is None:
        return []
    results = []
    for key, child in tree.children:
        gen_pref_value(child, {"path": path, "key": key, "subkey": ""}, 0,
                       results)
    return results


def run_queries(sql_file, users):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE users (username, directory)")
    db.execute("CREATE TABLE plist (key, subkey, value, path)")
    for name, home in users:
        db.execute("INSERT INTO users VALUES (?, ?)", (name, home))
        for r in plist_rows(home + STATUS):
            db.execute("INSERT INTO plist VALUES (?, ?, ?, ?)",
                       (r["key"], r["subkey"], r["value"], r["path"]))
    with open(sql_file) as f:
        text = "\n".join(line for line in f
                         if not line.lstrip().startswith("--"))
    return [sorted(db.execute(q).fetchall()) for q in text.split(";")
            if q.strip()]


def main(argv):
    if len(argv) >= 2 and argv[0] == "rows":
        rows = [r for path in argv[1:] for r in plist_rows(path)]
        json.dump(rows, sys.stdout)
    elif len(argv) >= 2 and argv[0] == "query":
        users = [tuple(a.split("=", 1)) for a in argv[2:]]
        json.dump(run_queries(argv[1], users), sys.stdout)
    else:
        sys.exit(__doc__)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
