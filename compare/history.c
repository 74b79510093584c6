/* SPDX-License-Identifier: MIT */
/* history: runs in SQLite (the only file that links it). */
#include "history.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "../lib/version.h"

/* how long a writer waits for another (ms), and how often the switch to WAL
 * is tried again meanwhile */
#define BUSY_MS 60000
#define WAL_RETRY_MS 20

struct mt_history {
	sqlite3 *db;
	char path[512];
};

static const char schema_sql[] =
	"CREATE TABLE runs ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" added TEXT NOT NULL, kind TEXT NOT NULL, label TEXT NOT NULL DEFAULT '',"
	" source TEXT NOT NULL DEFAULT '', host TEXT NOT NULL DEFAULT '',"
	" gpu TEXT NOT NULL DEFAULT '', driver TEXT NOT NULL DEFAULT '',"
	" cuda TEXT NOT NULL DEFAULT '', nccl TEXT NOT NULL DEFAULT '',"
	" megatune TEXT NOT NULL DEFAULT '', created TEXT NOT NULL DEFAULT '');"
	"CREATE TABLE metrics ("
	" run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" id TEXT NOT NULL, name TEXT NOT NULL, unit TEXT NOT NULL,"
	" higher_better INTEGER NOT NULL, value REAL, cv REAL, n INTEGER NOT NULL DEFAULT 0,"
	" spread REAL, samples BLOB, PRIMARY KEY (run, id));"
	"CREATE INDEX runs_by_kind ON runs(kind, host, gpu, id);"
	"PRAGMA user_version = 1;";

static int db_error(struct mt_history *h, int code, const char *what, struct mt_error *err)
{
	int x = sqlite3_errcode(h->db);

	if (x == SQLITE_NOTADB || x == SQLITE_CORRUPT)
		return mt_error_set(err, MT_EINVAL, "%s: not a megatune history database (SQLite: "
				    "%s, while %s)", h->path, sqlite3_errmsg(h->db), what);
	return mt_error_set(err, code, "%s: %s: %s", h->path, what, sqlite3_errmsg(h->db));
}

static int exec(struct mt_history *h, const char *sql, const char *what, struct mt_error *err)
{
	if (sqlite3_exec(h->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_error(h, MT_EIO, what, err);
	return MT_OK;
}

static int user_version(struct mt_history *h, int *v, struct mt_error *err)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(h->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return db_error(h, MT_EINVAL, "reading its schema version", err);
	rc = sqlite3_step(st);
	*v = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return db_error(h, MT_EINVAL, "reading its schema version", err);
	return MT_OK;
}

static int count_tables(struct mt_history *h, int *n)
{
	sqlite3_stmt *st;

	*n = 0;
	if (sqlite3_prepare_v2(h->db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
			       -1, &st, NULL) != SQLITE_OK)
		return MT_EIO;
	if (sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return MT_OK;
}

/* WAL mode, which stays with the file.  Switching to it needs the file to
 * itself, and SQLite answers SQLITE_BUSY at once, without the busy handler,
 * while another process holds it (two writers opening a new history): wait and
 * try again, up to the busy timeout. */
static int set_wal(struct mt_history *h, struct mt_error *err)
{
	struct timespec pause = { 0, WAL_RETRY_MS * 1000 * 1000 };
	int i, rc = SQLITE_OK;

	for (i = 0; i < BUSY_MS / WAL_RETRY_MS; i++) {
		rc = sqlite3_exec(h->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
			break;
		nanosleep(&pause, NULL);
	}
	return rc == SQLITE_OK ? MT_OK : db_error(h, MT_EIO, "setting WAL mode", err);
}

/* Create the schema in an empty file, or check the version of an existing one. */
static int history_setup(struct mt_history *h, int create, struct mt_error *err)
{
	int v, rc, ntab;

	if ((rc = user_version(h, &v, err)))
		return rc;
	if (v > MT_HISTORY_VERSION)
		return mt_error_set(err, MT_EINVAL, "%s: history schema version %d is newer than "
				    "this megatune reads (%d): use a newer megatune", h->path, v,
				    MT_HISTORY_VERSION);
	if (v == MT_HISTORY_VERSION)
		return MT_OK;
	if (!create)
		return mt_error_set(err, MT_EINVAL, "%s: not a megatune history (schema version "
				    "%d; `megatune history add` creates one)", h->path, v);
	/* another process may be creating it too: decide under the write lock */
	if ((rc = exec(h, "BEGIN IMMEDIATE", "locking it", err)))
		return rc;
	if ((rc = user_version(h, &v, err)) || (rc = count_tables(h, &ntab) ? MT_EIO : MT_OK)) {
		exec(h, "ROLLBACK", "rolling back", NULL);
		return rc ? rc : db_error(h, MT_EIO, "listing its tables", err);
	}
	if (v == 0 && ntab > 0) {
		exec(h, "ROLLBACK", "rolling back", NULL);
		return mt_error_set(err, MT_EINVAL, "%s: an SQLite database with other tables, not "
				    "a megatune history", h->path);
	}
	if (v == 0 && ((rc = exec(h, schema_sql, "creating the tables", err)))) {
		exec(h, "ROLLBACK", "rolling back", NULL);
		return rc;
	}
	return exec(h, "COMMIT", "committing the schema", err);
}

int mt_history_open(const char *path, int create, struct mt_history **out, struct mt_error *err)
{
	struct mt_history *h = calloc(1, sizeof(*h));
	int rc, flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);

	*out = NULL;
	if (!h)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	snprintf(h->path, sizeof(h->path), "%s", path);
	if (sqlite3_open_v2(path, &h->db, flags, NULL) != SQLITE_OK) {
		rc = mt_error_set(err, create ? MT_EIO : MT_EINVAL, "%s: cannot open the history: %s",
				  path, h->db ? sqlite3_errmsg(h->db) : "out of memory");
		mt_history_close(h);
		return rc;
	}
	sqlite3_busy_timeout(h->db, BUSY_MS);
	/* the version first: a newer or foreign file is left as it is */
	if ((rc = history_setup(h, create, err)) ||
	    (rc = set_wal(h, err)) ||
	    (rc = exec(h, "PRAGMA foreign_keys = ON", "enabling foreign keys", err))) {
		mt_history_close(h);
		return rc;
	}
	*out = h;
	return MT_OK;
}

void mt_history_close(struct mt_history *h)
{
	if (!h)
		return;
	sqlite3_close(h->db);
	free(h);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_TRANSIENT);
}

static void bind_num(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static int insert_run(struct mt_history *h, const char *source, const char *label,
		      const struct mt_cm_set *s, long long *id, struct mt_error *err)
{
	static const char sql[] = "INSERT INTO runs (added, kind, label, source, host, gpu, "
				  "driver, cuda, nccl, megatune, created) "
				  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	sqlite3_stmt *st;
	char when[32];
	struct tm tmv;
	time_t now = time(NULL);
	int rc;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tmv));
	if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(h, MT_EIO, "adding a run", err);
	bind_text(st, 1, when);
	bind_text(st, 2, s->kind);
	bind_text(st, 3, label);
	bind_text(st, 4, source);
	bind_text(st, 5, s->env.host);
	bind_text(st, 6, s->env.gpu);
	bind_text(st, 7, s->env.driver);
	bind_text(st, 8, s->env.cuda);
	bind_text(st, 9, s->env.nccl);
	bind_text(st, 10, s->env.megatune[0] ? s->env.megatune : MEGATUNE_VERSION);
	bind_text(st, 11, s->env.created);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(h, MT_EIO, "adding a run", err);
	*id = sqlite3_last_insert_rowid(h->db);
	return MT_OK;
}

static int insert_metrics(struct mt_history *h, long long run, const struct mt_cm_set *s,
			  struct mt_error *err)
{
	static const char sql[] = "INSERT INTO metrics (run, id, name, unit, higher_better, "
				  "value, cv, n, spread, samples) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	sqlite3_stmt *st;
	int i, rc = SQLITE_DONE;

	if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(h, MT_EIO, "adding metrics", err);
	for (i = 0; i < s->n && rc == SQLITE_DONE; i++) {
		const struct mt_cm_metric *m = &s->m[i];

		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, run);
		bind_text(st, 2, m->id);
		bind_text(st, 3, m->name);
		bind_text(st, 4, m->unit);
		sqlite3_bind_int(st, 5, m->higher_better);
		bind_num(st, 6, m->value);
		bind_num(st, 7, m->cv);
		sqlite3_bind_int(st, 8, m->n);
		bind_num(st, 9, m->spread);
		if (m->nsamples > 0)
			sqlite3_bind_blob(st, 10, m->samples, m->nsamples * (int)sizeof(double),
					  SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, 10);
		rc = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(h, MT_EIO, "adding metrics", err);
	return MT_OK;
}

/* 1 when run `run` holds exactly the metrics of s, with the same values. */
static int same_metrics(struct mt_history *h, long long run, const struct mt_cm_set *s)
{
	static const char sql[] = "SELECT value FROM metrics WHERE run = ? AND id = ?";
	sqlite3_stmt *st;
	int i, same = 1;

	if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	for (i = 0; i < s->n && same; i++) {
		const struct mt_cm_metric *m = &s->m[i];

		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, run);
		bind_text(st, 2, m->id);
		if (sqlite3_step(st) != SQLITE_ROW)
			same = 0;
		else if (sqlite3_column_type(st, 0) == SQLITE_NULL)
			same = !isfinite(m->value);
		else
			same = isfinite(m->value) && sqlite3_column_double(st, 0) == m->value;
	}
	sqlite3_finalize(st);
	return same;
}

/* The id of a run already stored with s's identity and values, 0 if none
 * (the last 64 runs of that identity are looked at). */
static long long find_same(struct mt_history *h, const struct mt_cm_set *s)
{
	static const char sql[] =
		"SELECT id FROM runs r WHERE kind = ? AND host = ? AND gpu = ? AND created = ? "
		"AND (SELECT count(*) FROM metrics m WHERE m.run = r.id) = ? "
		"ORDER BY id DESC LIMIT 64";
	sqlite3_stmt *st;
	long long found = 0;

	if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	bind_text(st, 1, s->kind);
	bind_text(st, 2, s->env.host);
	bind_text(st, 3, s->env.gpu);
	bind_text(st, 4, s->env.created);
	sqlite3_bind_int(st, 5, s->n);
	while (!found && sqlite3_step(st) == SQLITE_ROW) {
		long long run = sqlite3_column_int64(st, 0);

		if (same_metrics(h, run, s))
			found = run;
	}
	sqlite3_finalize(st);
	return found;
}

int mt_history_add(struct mt_history *h, const char *source, const char *label,
		   const struct mt_cm_set *s, long long *id, long long *dup, struct mt_error *err)
{
	long long rid = 0, same;
	int rc;

	if (dup)
		*dup = 0;
	if ((rc = exec(h, "BEGIN IMMEDIATE", "locking it", err)))
		return rc;
	/* under the lock: two writers adding one file store it once */
	if (s->n > 0 && (same = find_same(h, s))) {
		if (dup)
			*dup = same;
		return exec(h, "COMMIT", "committing", err);
	}
	if ((rc = insert_run(h, source, label, s, &rid, err)) ||
	    (rc = insert_metrics(h, rid, s, err))) {
		exec(h, "ROLLBACK", "rolling back", NULL);
		return rc;
	}
	if ((rc = exec(h, "COMMIT", "committing the run", err)))
		return rc;
	if (id)
		*id = rid;
	return MT_OK;
}

static void col_text(sqlite3_stmt *st, int i, char *dst, size_t cap)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(dst, cap, "%s", t ? (const char *)t : "");
}

int mt_history_list(struct mt_history *h, const char *kind, const char *host, const char *gpu,
		    int last, struct mt_hist_run **runs, int *n, struct mt_error *err)
{
	static const char sql[] =
		"SELECT * FROM (SELECT r.id, added, kind, label, source, host, gpu, driver, cuda, "
		"nccl, megatune, created, (SELECT count(*) FROM metrics m WHERE m.run = r.id) "
		"FROM runs r WHERE (?1 IS NULL OR kind = ?1) AND (?2 IS NULL OR host = ?2) "
		"AND (?3 IS NULL OR gpu = ?3) ORDER BY r.id DESC LIMIT ?4) ORDER BY 1";
	struct mt_hist_run *r = NULL, *nr;
	sqlite3_stmt *st;
	int cap = 0, rc;

	*runs = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(h, MT_EINVAL, "listing runs", err);
	if (kind)
		bind_text(st, 1, kind);
	if (host)
		bind_text(st, 2, host);
	if (gpu)
		bind_text(st, 3, gpu);
	sqlite3_bind_int(st, 4, last > 0 ? last : -1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct mt_hist_run *x;

		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if (!(nr = realloc(r, (size_t)cap * sizeof(*r)))) {
				free(r);
				sqlite3_finalize(st);
				return mt_error_set(err, MT_ENOMEM, "out of memory");
			}
			r = nr;
		}
		x = &r[(*n)++];
		memset(x, 0, sizeof(*x));
		x->id = sqlite3_column_int64(st, 0);
		col_text(st, 1, x->added, sizeof(x->added));
		col_text(st, 2, x->kind, sizeof(x->kind));
		col_text(st, 3, x->label, sizeof(x->label));
		col_text(st, 4, x->source, sizeof(x->source));
		col_text(st, 5, x->env.host, sizeof(x->env.host));
		col_text(st, 6, x->env.gpu, sizeof(x->env.gpu));
		col_text(st, 7, x->env.driver, sizeof(x->env.driver));
		col_text(st, 8, x->env.cuda, sizeof(x->env.cuda));
		col_text(st, 9, x->env.nccl, sizeof(x->env.nccl));
		col_text(st, 10, x->env.megatune, sizeof(x->env.megatune));
		col_text(st, 11, x->env.created, sizeof(x->env.created));
		x->nmetrics = sqlite3_column_int(st, 12);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(r);
		*n = 0;
		return db_error(h, MT_EIO, "listing runs", err);
	}
	*runs = r;
	return MT_OK;
}

static double col_num(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static const char *history_kind_name(const char *k)
{
	const struct mt_cm_kind *x;

	for (x = mt_cm_kinds; x->name; x++)
		if (!strcmp(x->name, k))
			return x->name;
	return "unknown";
}

int mt_history_metrics(struct mt_history *h, long long id, struct mt_cm_set *out,
		       struct mt_error *err)
{
	static const char sql[] = "SELECT id, name, unit, higher_better, value, cv, n, spread, "
				  "samples, (SELECT kind FROM runs WHERE runs.id = ?1) FROM metrics "
				  "WHERE run = ?1 ORDER BY rowid";
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	out->kind = "unknown";
	if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(h, MT_EINVAL, "reading metrics", err);
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct mt_cm_metric *m;
		const char *mid = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		int nb = sqlite3_column_bytes(st, 8);

		out->kind = history_kind_name((const char *)sqlite3_column_text(st, 9));
		if (!(m = mt_cm_add(out, mid ? mid : "", name ? name : "",
				    mt_cm_unit((const char *)sqlite3_column_text(st, 2)),
				    sqlite3_column_int(st, 3), col_num(st, 4)))) {
			sqlite3_finalize(st);
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		}
		m->cv = col_num(st, 5);
		m->n = sqlite3_column_int(st, 6);
		m->spread = col_num(st, 7);
		if (nb > 0 && nb % (int)sizeof(double) == 0 &&
		    mt_cm_set_samples(m, sqlite3_column_blob(st, 8), nb / (int)sizeof(double))) {
			sqlite3_finalize(st);
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(h, MT_EIO, "reading metrics", err);
	if (mt_cm_index(out))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	return MT_OK;
}

int mt_history_prune(struct mt_history *h, const long long *ids, int nids, int keep,
		     int *removed, struct mt_error *err)
{
	static const char by_keep[] =
		"DELETE FROM runs WHERE id IN (SELECT id FROM (SELECT id, row_number() OVER "
		"(PARTITION BY kind, host, gpu ORDER BY id DESC) AS k FROM runs) WHERE k > ?1)";
	sqlite3_stmt *st;
	int rc, i;

	*removed = 0;
	if ((rc = exec(h, "BEGIN IMMEDIATE", "locking it", err)))
		return rc;
	if (sqlite3_prepare_v2(h->db, keep > 0 ? by_keep : "DELETE FROM runs WHERE id = ?1", -1,
			       &st, NULL) != SQLITE_OK) {
		rc = db_error(h, MT_EIO, "pruning", err);
		exec(h, "ROLLBACK", "rolling back", NULL);
		return rc;
	}
	for (i = 0; i < (keep > 0 ? 1 : nids); i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, keep > 0 ? keep : ids[i]);
		if (sqlite3_step(st) != SQLITE_DONE) {
			rc = db_error(h, MT_EIO, "pruning", err);
			sqlite3_finalize(st);
			exec(h, "ROLLBACK", "rolling back", NULL);
			return rc;
		}
		*removed += sqlite3_changes(h->db);
	}
	sqlite3_finalize(st);
	return exec(h, "COMMIT", "committing the pruning", err);
}
