/* SPDX-License-Identifier: MIT */
/*
 * The wire contract between metalcapd and its clients: msgpack-RPC over a
 * unix stream socket.  docs/metalcap-rpc.7 is the reference for outside
 * clients; tests/rpc/check-protocol-doc.py keeps it and this file in step.
 *
 *   request       [0, msgid, method, params]
 *   response      [1, msgid, error, result]
 *                 error: nil, or [type, "CODE: message"] with type
 *                 MC_ERR_EXCEPTION or MC_ERR_VALIDATION, the form
 *                 Neovim's rpcrequest and pynvim's NvimError read
 *   notification  [2, method, params]
 *
 * Strings are accepted as msgpack str or bin and sent as str.  Once a
 * request's msgid is known, whatever else is wrong with it is answered
 * with an error; only bytes that are not msgpack, or the limits below,
 * close a connection.  Notifications and responses from a client are
 * ignored.
 *
 * Don't forget to bump MC_PROTOCOL_VERSION when anything here changes
 * meaning; retired names are never reused.
 */
#ifndef MC_PROTOCOL_H
#define MC_PROTOCOL_H

/*
 * 2: probe, reverts, EPROBE.
 * 3: errors are [type, "CODE: message"]; job maps carry desired and
 *    next_state, and unlocked is the desired flag; change events;
 *    subscribe {call}.  Added since, meaning nothing else changed:
 *    start's and restart's job maps carry action.
 */
#define MC_PROTOCOL_VERSION	3

#define MC_MSG_REQUEST		0
#define MC_MSG_RESPONSE		1
#define MC_MSG_NOTIFY		2

/* Methods: [params] -> result (metalcap-rpc(7) has every field). */
#define MC_M_HELLO		"hello"		/* [] -> {version, protocol, pid} */
#define MC_M_STATUS		"status"	/* [job?] -> [job map] */
#define MC_M_ENABLE		"enable"	/* [job, {profile}?] -> job map */
#define MC_M_DISABLE		"disable"	/* [job] -> job map */
#define MC_M_PROFILE_SET	"profile.set"	/* [job, profile] -> job map */
#define MC_M_PROFILE_LIST	"profile.list"	/* [] -> [profile map] */
#define MC_M_PROBE		"probe"		/* [job | {profile}] -> verdict */
#define MC_M_START		"start"		/* [job] -> job map */
#define MC_M_STOP		"stop"		/* [job] -> job map */
#define MC_M_RESTART		"restart"	/* [job] -> job map */
#define MC_M_RELOAD		"reload"	/* [] -> true */
#define MC_M_SUBSCRIBE		"subscribe"	/* [{call}?] -> true */
/* Notification to subscribers: [{type, job, request}]. */
#define MC_N_EVENT		"event"
/* Instead, with subscribe [{call: F}]: Neovim runs F(event). */
#define MC_N_CALL		"nvim_call_function"

/* Event types. */
#define MC_EV_STATE		"state"		/* the job's state or reason */
#define MC_EV_CHANGE		"change"	/* a request changed the job */
#define MC_EV_REVERT		"revert"	/* sent back to stock */
#define MC_EV_FAILED		"failed"	/* given up: stopped */
#define MC_EV_REMOVED		"removed"	/* its job file is gone */
#define MC_EV_HELD		"held"		/* launchd does not run it,
						   or runs it again */

/* Error types: the first element of an error. */
#define MC_ERR_EXCEPTION	0	/* the call was right; it failed */
#define MC_ERR_VALIDATION	1	/* the call was wrong */

/* Error codes: the "CODE" before ": message". */
#define MC_E_PROTO		"EPROTO"	/* not msgpack-RPC, or unknown method */
#define MC_E_INVAL		"EINVAL"	/* bad arguments */
#define MC_E_NOJOB		"ENOJOB"	/* no such job */
#define MC_E_NOPROFILE		"ENOPROFILE"	/* no such profile */
#define MC_E_MANAGED		"EMANAGED"	/* forbidden by managed settings */
#define MC_E_TOOBIG		"ETOOBIG"	/* message over the size limit */
#define MC_E_BUSY		"EBUSY"		/* too many requests in flight */
#define MC_E_IO			"EIO"		/* the daemon could not persist */
#define MC_E_PROBE		"EPROBE"	/* the profile failed the probe */
#define MC_E_SUPERSEDED		"ESUPERSEDED"	/* a later request came first */

/* Limits. */
#define MC_MAX_MESSAGE		(1024 * 1024)	/* bytes buffered per message */
/* A reply may list a thousand jobs; clients trust the daemon further. */
#define MC_MAX_REPLY		(64 * 1024 * 1024)
#define MC_MAX_METHOD		64		/* bytes of a method name */
#define MC_MAX_CLIENTS		256
#define MC_MAX_OUTSTANDING	64		/* queued responses per client */

#define MC_SOCKET_NAME		"metalcapd.sock"

#endif
