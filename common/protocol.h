/* SPDX-License-Identifier: MIT */
/*
 * The wire contract between metalcapd and its clients: msgpack-RPC over a
 * unix stream socket.
 *
 *   request       [0, msgid, method, params]
 *   response      [1, msgid, error, result]    error: nil or {code, message}
 *   notification  [2, method, params]
 *
 * Don't forget to bump MC_PROTOCOL_VERSION when anything here changes
 * meaning; retired names are never reused.
 */
#ifndef MC_PROTOCOL_H
#define MC_PROTOCOL_H

#define MC_PROTOCOL_VERSION	2	/* 2: probe, reverts, EPROBE */

#define MC_MSG_REQUEST		0
#define MC_MSG_RESPONSE		1
#define MC_MSG_NOTIFY		2

/* Methods. */
#define MC_M_HELLO		"hello"
#define MC_M_STATUS		"status"
#define MC_M_ENABLE		"enable"
#define MC_M_DISABLE		"disable"
#define MC_M_PROFILE_SET	"profile.set"
#define MC_M_PROFILE_LIST	"profile.list"
#define MC_M_PROBE		"probe"
#define MC_M_START		"start"
#define MC_M_STOP		"stop"
#define MC_M_RESTART		"restart"
#define MC_M_RELOAD		"reload"
#define MC_M_SUBSCRIBE		"subscribe"
/* Notification. */
#define MC_N_EVENT		"event"

/* Error codes (strings on the wire). */
#define MC_E_NOJOB		"ENOJOB"	/* no such job */
#define MC_E_INVAL		"EINVAL"	/* bad arguments */
#define MC_E_MANAGED		"EMANAGED"	/* forbidden by managed settings */
#define MC_E_BUSY		"EBUSY"		/* too many requests in flight */
#define MC_E_PROTO		"EPROTO"	/* not msgpack-RPC, or unknown method */
#define MC_E_TOOBIG		"ETOOBIG"	/* message over the size limit */
#define MC_E_NOPROFILE		"ENOPROFILE"	/* no such profile */
#define MC_E_IO			"EIO"		/* the daemon could not persist */
#define MC_E_PROBE		"EPROBE"	/* the profile failed the probe */

/* Limits. */
#define MC_MAX_MESSAGE		(1024 * 1024)	/* bytes buffered per message */
/* A reply may list a thousand jobs; clients trust the daemon further. */
#define MC_MAX_REPLY		(64 * 1024 * 1024)
#define MC_MAX_METHOD		64		/* bytes of a method name */
#define MC_MAX_CLIENTS		256
#define MC_MAX_OUTSTANDING	64		/* queued responses per client */

#define MC_SOCKET_NAME		"metalcapd.sock"

#endif
