#define _GNU_SOURCE
#include "fake_scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { k_max_entries = 1024, k_max_gpus = 64 };

struct entry {
  char* key;
  char* value;
};

static struct entry g_entries[k_max_entries];
static int g_entry_count = -1;
static char g_uuid[k_max_gpus][48];
static char g_bus[k_max_gpus][32];

static char* trim(char* s) {
  while (*s == ' ' || *s == '\t') {
    ++s;
  }
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r')) {
    s[--n] = '\0';
  }
  return s;
}

static void load(void) {
  if (g_entry_count >= 0) {
    return;
  }
  g_entry_count = 0;
  const char* path = getenv("FAKE_GPU_SCENARIO");
  if (path == NULL || *path == '\0') {
    return;
  }
  FILE* f = fopen(path, "r");
  if (f == NULL) {
    return;
  }
  char line[4096];
  while (fgets(line, sizeof line, f) != NULL && g_entry_count < k_max_entries) {
    char* text = trim(line);
    if (*text == '#' || *text == '\0') {
      continue;
    }
    char* eq = strchr(text, '=');
    if (eq == NULL) {
      continue;
    }
    *eq = '\0';
    /* A later line overrides an earlier one: search from the end in fake_get. */
    g_entries[g_entry_count].key = strdup(trim(text));
    g_entries[g_entry_count].value = strdup(trim(eq + 1));
    ++g_entry_count;
  }
  fclose(f);
}

const char* fake_get(const char* key) {
  load();
  for (int i = g_entry_count - 1; i >= 0; --i) {
    if (strcmp(g_entries[i].key, key) == 0) {
      return g_entries[i].value;
    }
  }
  return NULL;
}

long long fake_get_int(const char* key, long long fallback) {
  const char* v = fake_get(key);
  if (v == NULL || *v == '\0') {
    return fallback;
  }
  return strtoll(v, NULL, 0);
}

const char* fake_gpu_get(int index, const char* key) {
  char name[256];
  snprintf(name, sizeof name, "gpu.%d.%s", index, key);
  const char* v = fake_get(name);
  if (v != NULL) {
    return v;
  }
  snprintf(name, sizeof name, "gpu.all.%s", key);
  return fake_get(name);
}

long long fake_gpu_int(int index, const char* key, long long fallback) {
  const char* v = fake_gpu_get(index, key);
  if (v == NULL || *v == '\0') {
    return fallback;
  }
  return strtoll(v, NULL, 0);
}

int fake_gpu_count(void) {
  load();
  long long count = fake_get_int("gpu.count", -1);
  if (count >= 0) {
    return count > k_max_gpus ? k_max_gpus : (int)count;
  }
  int highest = -1;
  for (int i = 0; i < g_entry_count; ++i) {
    int n = 0;
    if (sscanf(g_entries[i].key, "gpu.%d.", &n) == 1 && n > highest && n < k_max_gpus) {
      highest = n;
    }
  }
  return highest >= 0 ? highest + 1 : 1;
}

const char* fake_gpu_name(int index) {
  const char* v = fake_gpu_get(index, "name");
  return v != NULL ? v : "NVIDIA H100 80GB HBM3";
}

const char* fake_gpu_uuid(int index) {
  const char* v = fake_gpu_get(index, "uuid");
  if (v != NULL || index < 0 || index >= k_max_gpus) {
    return v != NULL ? v : "GPU-00000000-0000-0000-0000-000000000000";
  }
  snprintf(g_uuid[index], sizeof g_uuid[index], "GPU-%08x-1111-2222-3333-%012x",
           0xfa4e0000u + (unsigned)index, (unsigned)index);
  return g_uuid[index];
}

const char* fake_gpu_bus_id(int index) {
  const char* v = fake_gpu_get(index, "bus_id");
  if (v != NULL || index < 0 || index >= k_max_gpus) {
    return v != NULL ? v : "00000000:00:00.0";
  }
  snprintf(g_bus[index], sizeof g_bus[index], "00000000:%02X:00.0",
           0x18u + 0x10u * (unsigned)index);
  return g_bus[index];
}

void fake_maybe_crash_or_hang(const char* prefix) {
  char key[128];
  snprintf(key, sizeof key, "%s_crash", prefix);
  if (fake_get_int(key, 0) != 0) {
    fprintf(stderr, "fake: %s crash requested by the scenario\n", prefix);
    abort();
  }
  snprintf(key, sizeof key, "%s_hang", prefix);
  if (fake_get_int(key, 0) != 0) {
    for (;;) {
      sleep(1);
    }
  }
}
