# Debian's python3-caldav against the server (test/dav/python-caldav.test.ts and radicale-compare.test.ts run this).
# Phase "a": discovery, a new task list, todos saved, completed (plain and repeating), a sync token.
# Phase "b" (after the test changed things in the web app): objects_by_sync_token since that token.
# Phase "c": edits a task made in the web app, deletes one, notes a todo's ETag and a new sync token.
# Phase "d" (after the web app edited, completed and deleted tasks): a PUT with the stale ETag (the
# conflict: 412, the server's version kept), what the web app did as python sees it, a sync since "c".
import json
import os
import sys

import caldav

url, user, secret, phase = os.environ["DAV_URL"], os.environ["DAV_USER"], os.environ["DAV_SECRET"], sys.argv[1]
# DAV_CA: the PEM file of the proxy's self-signed certificate (https targets), verified against.
client = caldav.DAVClient(url=url, username=user, password=secret, ssl_verify_cert=os.environ.get("DAV_CA") or True)
principal = client.principal()
out = {}


def todo(uid, extra=""):
    return "\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//python test//EN", "BEGIN:VTODO", f"UID:{uid}", "DTSTAMP:20261101T000000Z", f"SUMMARY:{uid}"] + ([extra] if extra else []) + ["END:VTODO", "END:VCALENDAR", ""])


if phase == "a":
    out["calendars"] = sorted(str(c.name) for c in principal.calendars())
    cal = principal.make_calendar(name="py list", cal_id="py-list", supported_calendar_component_set=["VTODO"])
    out["made"] = str(cal.url)
    cal.save_todo(todo("py-plain", "DUE;VALUE=DATE:20261201"))
    cal.save_todo(todo("py-repeat", "DTSTART;VALUE=DATE:20261201\r\nDUE;VALUE=DATE:20261201\r\nRRULE:FREQ=WEEKLY;COUNT=3"))
    out["open_before"] = sorted(str(t.icalendar_component["uid"]) for t in cal.todos())
    cal.todo_by_uid("py-plain").complete()
    out["open_after_plain"] = sorted(str(t.icalendar_component["uid"]) for t in cal.todos())
    out["all_after_plain"] = len(cal.todos(include_completed=True))
    rep = cal.todo_by_uid("py-repeat")
    rep.complete()  # handle_rrule=False: STATUS:COMPLETED on the series (as iOS)
    again = cal.todo_by_uid("py-repeat")
    out["repeat_after_complete"] = {"status": str(again.icalendar_component.get("status")), "due": again.icalendar_component["due"].dt.isoformat()}
    out["all_after_repeat"] = len(cal.todos(include_completed=True))
    objs = cal.objects_by_sync_token(load_objects=False)
    out["token"] = objs.sync_token
    out["synced"] = len(list(objs))
else:
    cal = [c for c in principal.calendars() if str(c.name) == "py list"][0]
    summaries = lambda todos: sorted(str(t.icalendar_component["summary"]) for t in todos)
    if phase == "b":
        changed = cal.objects_by_sync_token(sync_token=os.environ["DAV_TOKEN"], load_objects=True)
        out["changed"] = sorted(str(o.url).rsplit("/", 1)[1] for o in changed if o.data)
        out["deleted"] = sorted(str(o.url).rsplit("/", 1)[1] for o in changed if not o.data)
    elif phase == "c":
        web = [t for t in cal.todos() if str(t.icalendar_component["summary"]) == "added on the web"][0]
        web.icalendar_component["summary"] = "edited in python"
        web.save()
        cal.todo_by_uid("py-plain").delete()
        rep = cal.todo_by_uid("py-repeat")
        got = client.request(str(rep.url), "GET")
        out["repeat_url"] = str(rep.url)
        out["repeat_etag"] = got.headers["ETag"]
        out["repeat_data"] = rep.data
        out["token"] = cal.objects_by_sync_token(load_objects=False).sync_token
        out["open"] = summaries(cal.todos())
    else:
        stale = os.environ["DAV_DATA"].replace("SUMMARY:renamed on the web", "SUMMARY:stale python edit")
        put = client.put(os.environ["DAV_OBJ"], stale, {"Content-Type": 'text/calendar; charset="utf-8"', "If-Match": os.environ["DAV_ETAG"]})
        out["stale_put"] = put.status
        out["repeat_summary"] = str(cal.todo_by_uid("py-repeat").icalendar_component["summary"])
        out["open"] = summaries(cal.todos())
        out["all"] = summaries(cal.todos(include_completed=True))
        changed = cal.objects_by_sync_token(sync_token=os.environ["DAV_TOKEN"], load_objects=True)
        out["changed"] = sorted(str(o.url).rsplit("/", 1)[1] for o in changed if o.data)
        out["deleted"] = sorted(str(o.url).rsplit("/", 1)[1] for o in changed if not o.data)
print(json.dumps(out))
