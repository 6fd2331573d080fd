// Times as every page writes them: 24-hour, "2026-12-01 19:30", in the
// household's time zone (<body data-time-zone>, from settings.TIME_ZONE; see
// apps/core/timeformat.py and the `when` template filter), not the browser's
// locale, which gave a 12-hour clock here and 24-hour elsewhere.

function parts(moment, withSeconds) {
  const options = {
    year: "numeric", month: "2-digit", day: "2-digit",
    hour: "2-digit", minute: "2-digit", hourCycle: "h23",
  };
  if (withSeconds) options.second = "2-digit";
  const zone = document.body.dataset.timeZone;
  if (zone) options.timeZone = zone;
  const out = {};
  try {
    new Intl.DateTimeFormat("en-GB", options).formatToParts(moment).forEach(function (p) { out[p.type] = p.value; });
  } catch (error) {
    // An unknown zone name: the browser's own zone, still on a 24-hour clock.
    delete options.timeZone;
    new Intl.DateTimeFormat("en-GB", options).formatToParts(moment).forEach(function (p) { out[p.type] = p.value; });
  }
  return out;
}

// "19:30" (or "19:30:05" with seconds).
export function timeOfDay(value, withSeconds) {
  const p = parts(new Date(value), withSeconds);
  return p.hour + ":" + p.minute + (withSeconds ? ":" + p.second : "");
}

// "2026-12-01 19:30" (or with seconds).
export function dayAndTime(value, withSeconds) {
  const p = parts(new Date(value), withSeconds);
  return p.year + "-" + p.month + "-" + p.day + " " + timeOfDay(value, withSeconds);
}
