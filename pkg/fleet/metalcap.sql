-- osquery: metalcap's status on this Mac, from the status.plist metalcapd
-- keeps in each user's state folder (the same document as status.json,
-- which osquery cannot read, with its jobs keyed by name).  Run as root
-- (osqueryd) to see every user.  Checked by the tests against rows made
-- by a port of osquery's plist table (tests/fleet/osquery_plist.py) from
-- a file metalcapd wrote; not run in osquery itself.
--
-- osquery flattens a job's fields into subkeys JOB/FIELD (seen and
-- last_probe one level deeper: JOB/seen/family_max); job names are
-- letters, digits, '.', '_' and '-', never '/'.

-- 1. One row per user: daemon version, instance id, last update.
SELECT u.username,
       MAX(CASE WHEN p.key = 'version' THEN p.value END) AS version,
       MAX(CASE WHEN p.key = 'instance_id' THEN p.value END) AS instance_id,
       MAX(CASE WHEN p.key = 'updated' THEN p.value END) AS updated
  FROM users AS u
  JOIN plist AS p
    ON p.path = u.directory || '/Library/Application Support/metalcap/state/status.plist'
 GROUP BY u.username;

-- 2. One row per job and field: user, job, field (name, profile, state,
-- reason, pid, seen/family_max, seen/threadgroup_memory,
-- last_probe/profile, last_probe/verdict, last_probe/time, reverts), value.
SELECT u.username,
       substr(p.subkey, 1, instr(p.subkey, '/') - 1) AS job,
       substr(p.subkey, instr(p.subkey, '/') + 1) AS field,
       p.value
  FROM users AS u
  JOIN plist AS p
    ON p.path = u.directory || '/Library/Application Support/metalcap/state/status.plist'
 WHERE p.key = 'jobs' AND instr(p.subkey, '/') > 0;

-- 3. One row per job with its state and reason: what a dashboard shows.
SELECT u.username,
       substr(p.subkey, 1, instr(p.subkey, '/') - 1) AS job,
       p.value AS state,
       (SELECT r.value FROM plist AS r
         WHERE r.path = p.path AND r.key = 'jobs'
           AND r.subkey = substr(p.subkey, 1, instr(p.subkey, '/')) || 'reason')
         AS reason
  FROM users AS u
  JOIN plist AS p
    ON p.path = u.directory || '/Library/Application Support/metalcap/state/status.plist'
 WHERE p.key = 'jobs'
   AND substr(p.subkey, instr(p.subkey, '/') + 1) = 'state';

-- 4. One row per verdict of metalcapctl verify on this guest, with what it
-- is about: its profile, the llama.cpp build and program, the model, the
-- guest's OS build and host, the shim's version; and the guest id, by
-- which the fleet counts a guest with several users once.  osquery's JSON
-- results of this query from many guests are what `metalcapctl fleet
-- allowlist` reads (verdicts are keyed vSEQ, as jobs by name).
SELECT u.username,
       (SELECT i.value FROM plist AS i
         WHERE i.path = p.path AND i.key = 'instance_id') AS instance_id,
       substr(p.subkey, 1, instr(p.subkey, '/') - 1) AS verdict_id,
       MAX(CASE WHEN substr(p.subkey, instr(p.subkey, '/') + 1) = 'profile' THEN p.value END) AS profile,
       MAX(CASE WHEN substr(p.subkey, instr(p.subkey, '/') + 1) = 'verdict' THEN p.value END) AS verdict,
       MAX(CASE WHEN substr(p.subkey, instr(p.subkey, '/') + 1) = 'date' THEN p.value END) AS date,
       MAX(CASE WHEN substr(p.subkey, instr(p.subkey, '/') + 1) = 'llama_build' THEN p.value END) AS llama_build,
       MAX(CASE WHEN substr(p.subkey, instr(p.subkey, '/') + 1) = 'program_sha256' THEN p.value END) AS program_sha256,
       MAX(CASE WHEN substr(p.subkey, instr(p.subkey, '/') + 1) = 'model_sha256' THEN p.value END) AS model_sha256,
       MAX(CASE WHEN substr(p.subkey, instr(p.subkey, '/') + 1) = 'os_build' THEN p.value END) AS os_build,
       MAX(CASE WHEN substr(p.subkey, instr(p.subkey, '/') + 1) = 'cpu_brand' THEN p.value END) AS cpu_brand,
       MAX(CASE WHEN substr(p.subkey, instr(p.subkey, '/') + 1) = 'hw_model' THEN p.value END) AS hw_model,
       MAX(CASE WHEN substr(p.subkey, instr(p.subkey, '/') + 1) = 'shim_version' THEN p.value END) AS shim_version,
       (SELECT g.value FROM plist AS g
         WHERE g.path = p.path AND g.key = 'guest_id') AS guest_id
  FROM users AS u
  JOIN plist AS p
    ON p.path = u.directory || '/Library/Application Support/metalcap/state/status.plist'
 WHERE p.key = 'verdicts' AND instr(p.subkey, '/') > 0
 GROUP BY u.username, p.path, verdict_id;
