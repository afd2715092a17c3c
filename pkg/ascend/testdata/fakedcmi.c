/*
 * fakedcmi: a stand-in for libdcmi.so used by the tests of the DCMI
 * binding. It exports the DCMI functions the binding resolves and reads
 * its state from the file named by FAKE_DCMI_STATE on every call, so a
 * test changes the machine by rewriting that file. Lines:
 *
 *   init <rc>
 *   chip <card> <dev> <logic> <phy> <type> <name> <aicores> <health> <net>
 *        <ipv4> <util> <temp> <power_tenths_w> <hbm_total_mb> <hbm_used_mb>
 *        <nerr> [<errcode>...]
 *
 * Build with -DOMIT_NETWORK_HEALTH to leave dcmi_get_device_network_health
 * out (the missing-symbol case).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHIPS 64
#define ERR_NOT_FOUND -8001

struct chip {
	int card, dev, logic, phy, aicores;
	char type[32], name[32];
	unsigned int health, net, util;
	int temp, power;
	unsigned int ip[4];
	unsigned long long hbm_total, hbm_used;
	int nerr;
	unsigned int err[16];
};

static int init_rc;
static int nchips;
static struct chip chips[MAX_CHIPS];

static int load(void) {
	const char *path = getenv("FAKE_DCMI_STATE");
	FILE *f;
	char word[32];
	init_rc = 0;
	nchips = 0;
	if (!path || !(f = fopen(path, "r")))
		return -1;
	while (fscanf(f, "%31s", word) == 1) {
		if (strcmp(word, "init") == 0) {
			if (fscanf(f, "%d", &init_rc) != 1)
				break;
		} else if (strcmp(word, "chip") == 0 && nchips < MAX_CHIPS) {
			struct chip *c = &chips[nchips];
			int i;
			if (fscanf(f, "%d %d %d %d %31s %31s %d %u %u %u.%u.%u.%u %u %d %d %llu %llu %d",
				   &c->card, &c->dev, &c->logic, &c->phy, c->type, c->name, &c->aicores,
				   &c->health, &c->net, &c->ip[0], &c->ip[1], &c->ip[2], &c->ip[3],
				   &c->util, &c->temp, &c->power, &c->hbm_total, &c->hbm_used, &c->nerr) != 19)
				break;
			if (c->nerr > 16)
				c->nerr = 16;
			for (i = 0; i < c->nerr; i++)
				if (fscanf(f, "%u", &c->err[i]) != 1)
					break;
			nchips++;
		}
	}
	fclose(f);
	return 0;
}

static struct chip *find(int card, int dev) {
	int i;
	if (load() != 0)
		return NULL;
	for (i = 0; i < nchips; i++)
		if (chips[i].card == card && chips[i].dev == dev)
			return &chips[i];
	return NULL;
}

int dcmi_init(void) {
	if (load() != 0)
		return -8005;
	return init_rc;
}

int dcmi_get_card_num_list(int *card_num, int *card_list, int list_len) {
	int i, j, n = 0;
	if (load() != 0)
		return -8005;
	for (i = 0; i < nchips; i++) {
		int seen = 0;
		for (j = 0; j < n; j++)
			seen |= card_list[j] == chips[i].card;
		if (!seen && n < list_len)
			card_list[n++] = chips[i].card;
	}
	*card_num = n;
	return 0;
}

int dcmi_get_device_num_in_card(int card_id, int *device_num) {
	int i, n = 0;
	if (load() != 0)
		return -8005;
	for (i = 0; i < nchips; i++)
		n += chips[i].card == card_id;
	*device_num = n;
	return n ? 0 : ERR_NOT_FOUND;
}

int dcmi_get_device_logic_id(int *device_logic_id, int card_id, int device_id) {
	struct chip *c = find(card_id, device_id);
	if (!c)
		return ERR_NOT_FOUND;
	*device_logic_id = c->logic;
	return 0;
}

int dcmi_get_device_phyid_from_logicid(unsigned int logicid, unsigned int *phyid) {
	int i;
	if (load() != 0)
		return -8005;
	for (i = 0; i < nchips; i++)
		if (chips[i].logic == (int)logicid) {
			*phyid = chips[i].phy;
			return 0;
		}
	return ERR_NOT_FOUND;
}

struct dcmi_chip_info {
	unsigned char chip_type[32];
	unsigned char chip_name[32];
	unsigned char chip_ver[32];
	unsigned int aicore_cnt;
};

int dcmi_get_device_chip_info(int card_id, int device_id, struct dcmi_chip_info *info) {
	struct chip *c = find(card_id, device_id);
	if (!c)
		return ERR_NOT_FOUND;
	memset(info, 0, sizeof(*info));
	strncpy((char *)info->chip_type, c->type, 31);
	strncpy((char *)info->chip_name, c->name, 31);
	strcpy((char *)info->chip_ver, "V1");
	info->aicore_cnt = c->aicores;
	return 0;
}

int dcmi_get_device_health(int card_id, int device_id, unsigned int *health) {
	struct chip *c = find(card_id, device_id);
	if (!c)
		return ERR_NOT_FOUND;
	*health = c->health;
	return 0;
}

int dcmi_get_device_errorcode_v2(int card_id, int device_id, int *error_count, unsigned int *list, unsigned int len) {
	int i;
	struct chip *c = find(card_id, device_id);
	if (!c)
		return ERR_NOT_FOUND;
	*error_count = 0;
	for (i = 0; i < c->nerr && i < (int)len; i++)
		list[(*error_count)++] = c->err[i];
	return 0;
}

#ifndef OMIT_NETWORK_HEALTH
int dcmi_get_device_network_health(int card_id, int device_id, unsigned int *result) {
	struct chip *c = find(card_id, device_id);
	if (!c)
		return ERR_NOT_FOUND;
	*result = c->net;
	return 0;
}
#endif

struct dcmi_ip_addr {
	union {
		unsigned char ip6[16];
		unsigned char ip4[4];
	} u_addr;
	int ip_type;
};

int dcmi_get_device_ip(int card_id, int device_id, int port_type, int port_id, struct dcmi_ip_addr *ip, struct dcmi_ip_addr *mask) {
	int i;
	struct chip *c = find(card_id, device_id);
	(void)port_id;
	if (!c)
		return ERR_NOT_FOUND;
	if (port_type != 1)
		return -8001;
	memset(ip, 0, sizeof(*ip));
	memset(mask, 0, sizeof(*mask));
	for (i = 0; i < 4; i++) {
		ip->u_addr.ip4[i] = (unsigned char)c->ip[i];
		mask->u_addr.ip4[i] = i < 3 ? 255 : 0;
	}
	return 0;
}

int dcmi_get_device_utilization_rate(int card_id, int device_id, int input_type, unsigned int *rate) {
	struct chip *c = find(card_id, device_id);
	if (!c)
		return ERR_NOT_FOUND;
	*rate = input_type == 2 ? c->util : 0;
	return 0;
}

int dcmi_get_device_temperature(int card_id, int device_id, int *temperature) {
	struct chip *c = find(card_id, device_id);
	if (!c)
		return ERR_NOT_FOUND;
	*temperature = c->temp;
	return 0;
}

int dcmi_get_device_power_info(int card_id, int device_id, int *power) {
	struct chip *c = find(card_id, device_id);
	if (!c)
		return ERR_NOT_FOUND;
	*power = c->power;
	return 0;
}

struct dcmi_hbm_info {
	unsigned long long memory_size;
	unsigned int freq;
	unsigned long long memory_usage;
	int temp;
	unsigned int bandwith_util_rate;
};

int dcmi_get_device_hbm_info(int card_id, int device_id, struct dcmi_hbm_info *info) {
	struct chip *c = find(card_id, device_id);
	if (!c)
		return ERR_NOT_FOUND;
	memset(info, 0, sizeof(*info));
	info->memory_size = c->hbm_total;
	info->memory_usage = c->hbm_used;
	return 0;
}

struct dcmi_get_memory_info_stru {
	unsigned long long memory_size;
	unsigned long long memory_available;
	unsigned int freq;
	unsigned long hugepagesize;
	unsigned long hugepages_total;
	unsigned long hugepages_free;
	unsigned int utiliza;
	unsigned char reserve[60];
};

int dcmi_get_device_memory_info_v3(int card_id, int device_id, struct dcmi_get_memory_info_stru *info) {
	struct chip *c = find(card_id, device_id);
	if (!c)
		return ERR_NOT_FOUND;
	memset(info, 0, sizeof(*info));
	info->memory_size = 32768;
	info->memory_available = 30720;
	return 0;
}

/*
 * Fault events: dcmi_subscribe_fault_event starts a thread that calls the
 * handler (with a NULL event; the binding does not read it) whenever the
 * state file changes, as DCMI reports each fault and recovery.
 */
#ifndef OMIT_FAULT_EVENTS
#include <pthread.h>
#include <time.h>

struct dcmi_event_filter {
	unsigned long long filter_flag;
	unsigned int event_id;
	unsigned char severity;
	unsigned char node_type;
};

typedef void (*fault_event_handler)(void *event);

static fault_event_handler handler;

/* read_state reads the state file into buf; it returns the length or -1. */
static long read_state(const char *path, char *buf, long size) {
	FILE *f = fopen(path, "r");
	long n;
	if (f == NULL)
		return -1;
	n = (long)fread(buf, 1, (size_t)size, f);
	fclose(f);
	return n;
}

/*
 * watch_state compares the file's contents, not its mtime: a rewrite of the
 * same size can land within one coarse mtime tick. The baseline is read by
 * dcmi_subscribe_fault_event before it returns, so a change written right
 * after subscribing is reported however late the thread first runs.
 */
static char watched[4096];
static char last[1 << 16];
static long nlast = -1;

static void *watch_state(void *arg) {
	static char now[1 << 16];
	struct timespec tick = {0, 5 * 1000 * 1000};
	long nnow;
	(void)arg;
	for (;;) {
		nanosleep(&tick, NULL);
		nnow = read_state(watched, now, sizeof now);
		if (nnow < 0 || (nnow == nlast && memcmp(now, last, (size_t)nnow) == 0))
			continue;
		memcpy(last, now, (size_t)nnow);
		nlast = nnow;
		handler(NULL);
	}
	return NULL;
}

int dcmi_subscribe_fault_event(int card_id, int device_id, struct dcmi_event_filter filter, fault_event_handler h) {
	pthread_t t;
	const char *path;
	(void)card_id;
	(void)device_id;
	(void)filter;
	if (h == NULL)
		return -8001;
	handler = h;
	path = getenv("FAKE_DCMI_STATE");
	if (path == NULL || strlen(path) >= sizeof watched)
		return -8005;
	strcpy(watched, path);
	if ((nlast = read_state(watched, last, sizeof last)) < 0)
		return -8005;
	if (pthread_create(&t, NULL, watch_state, NULL) != 0)
		return -1;
	pthread_detach(t);
	return 0;
}
#endif
