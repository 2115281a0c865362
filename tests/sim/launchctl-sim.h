/* SPDX-License-Identifier: MIT */
/*
 * The launchctl SIMULATOR's parts: its store of registered services
 * (sim_store.c), the supervisor that plays launchd for each
 * (sim_supervise.c), and the commands (launchctl-sim.c).
 */
#ifndef LAUNCHCTL_SIM_H
#define LAUNCHCTL_SIM_H

#include <stdbool.h>
#include <stddef.h>

#include <plist/plist.h>

#define EX_USAGE_CODE	64

extern const char	*sim_dir;	/* $LAUNCHCTL_SIM_DIR */
extern int		 sim_lock_fd;

bool	sim_alive(long long pid);
plist_t	sim_disabled_store(void);
plist_t	sim_environment_store(void);
void	sim_set_environment(const char *key, const char *value);
long long	sim_int(plist_t rec, const char *key, long long fallback);
bool	sim_is_disabled(const char *label);
plist_t	sim_load(const char *label);
void	sim_lock(void);
bool	sim_root(void);
void	sim_save(const char *label, plist_t rec);
void	sim_service_path(const char *label, char *buf, size_t len);
int	sim_set_disabled(const char *target, bool disabled);
void	sim_set_int(plist_t rec, const char *key, long long v);
void	sim_set_str(plist_t rec, const char *key, const char *v);
void	sim_unlock(void);
void	sim_update(const char *label, void (*fn)(plist_t, void *), void *arg);
void	sim_supervise(const char *label, plist_t job);
void	sim_use_domain(const char *domain);
bool	sim_keepalive(plist_t job, bool at_load, int status);

#endif
