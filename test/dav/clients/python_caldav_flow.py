# Debian's python3-caldav against the server (test/dav/python-caldav.test.ts runs this).
# Phase "a": discovery, a new task list, todos saved, completed (plain and repeating), a sync token.
# Phase "b" (after the test changed things in the web app): objects_by_sync_token since that token.
import json
import os
import sys

import caldav

url, user, secret, phase = os.environ["DAV_URL"], os.environ["DAV_USER"], os.environ["DAV_SECRET"], sys.argv[1]
client = caldav.DAVClient(url=url, username=user, password=secret)
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
    changed = cal.objects_by_sync_token(sync_token=os.environ["DAV_TOKEN"], load_objects=True)
    out["changed"] = sorted(str(o.url).rsplit("/", 1)[1] for o in changed if o.data)
    out["deleted"] = sorted(str(o.url).rsplit("/", 1)[1] for o in changed if not o.data)
print(json.dumps(out))
