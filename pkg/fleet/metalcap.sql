-- osquery: metalcap's status on this Mac, from the status.plist metalcapd
-- keeps in each user's state folder (the same document as status.json,
-- which osquery cannot read).  Run as root (osqueryd) to see every user.
-- Written against osquery's documented plist table (key, subkey, value,
-- path), and checked in SQLite by the tests, but not run in osquery.

-- 1. One row per user: daemon version, instance id, last update.
SELECT u.username,
       MAX(CASE WHEN p.key = 'version' THEN p.value END) AS version,
       MAX(CASE WHEN p.key = 'instance_id' THEN p.value END) AS instance_id,
       MAX(CASE WHEN p.key = 'updated' THEN p.value END) AS updated
  FROM users AS u
  JOIN plist AS p
    ON p.path = u.directory || '/Library/Application Support/metalcap/state/status.plist'
 GROUP BY u.username;

-- 2. Every per-job field (subkey names the job's index and field: name,
-- profile, state, reason, pid, seen, last_probe, reverts).
SELECT u.username, p.subkey, p.value
  FROM users AS u
  JOIN plist AS p
    ON p.path = u.directory || '/Library/Application Support/metalcap/state/status.plist'
 WHERE p.key = 'jobs';
