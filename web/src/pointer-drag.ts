// Drag and drop by Pointer Events. HTML5 drag and drop (draggable, dragstart, drop) fires for the
// mouse only: touch screens never send it. The list's reorder handle and the calendar's task chips
// use this for touch and pen (the handle for the mouse too): the pointer is captured, the element
// under the finger is the drop target, and releasing over one drops there.
//
// Two ways to start:
// - `holdMs: 0` starts at once. The element must have `touch-action: none` (a handle), or the
//   browser takes the finger for scrolling and cancels the pointer.
// - `holdMs > 0` starts after a press and hold without moving, so a swipe across the element still
//   scrolls the page. Once the drag has started, the element's (non-passive) touchmove is cancelled
//   so the page stays put under the finger.
import { useEffect, useRef } from "preact/hooks";

interface Press {
  pointerId: number;
  source: HTMLElement;
  x: number;
  y: number;
  timer: ReturnType<typeof setTimeout> | null;
  active: boolean;
  over: HTMLElement | null;
}

export interface PointerDragOptions {
  /** The drop target under an element the finger is over (`el.closest(...)`), or null for none. */
  targetOf: (el: Element, source: HTMLElement) => HTMLElement | null;
  onDrop: (source: HTMLElement, target: HTMLElement) => void;
  /** Pointer types handled; the others are left alone (e.g. the mouse, served by HTML5 drag and drop). */
  pointerTypes?: readonly string[];
  /** Press and hold this long before the drag starts (0: at once). */
  holdMs?: number;
  /** Put on the element the drag is shown on (the source, or `draggingOf(source)`). */
  draggingClass: string;
  draggingOf?: (source: HTMLElement) => HTMLElement | null;
  /** Put on the target under the finger. */
  overClass: string;
}

/** Moving this far (CSS px) during the hold is a swipe, not a press. */
const SLOP = 10;
/** A click this soon after a drag ended is the drag's own click (touch sends one on release). */
const CLICK_AFTER_DRAG_MS = 400;

/**
 * A mouse (or trackpad) is the primary pointer. Elements are `draggable` (HTML5) only then: on a
 * touch screen a long press on a draggable element may start the browser's own drag, which would
 * cancel this one.
 */
export const finePointer = typeof matchMedia === "function" && matchMedia("(pointer: fine)").matches;

/** Handlers to spread on every draggable element (one drag at a time), and a click filter. */
export function usePointerDrag(opts: PointerDragOptions) {
  const press = useRef<Press | null>(null);
  const dragEnded = useRef(-Infinity);
  const o = useRef(opts);
  o.current = opts;

  const shown = (p: Press) => o.current.draggingOf?.(p.source) ?? p.source;
  const setOver = (p: Press, el: HTMLElement | null) => {
    if (p.over === el) return;
    p.over?.classList.remove(o.current.overClass);
    p.over = el;
    el?.classList.add(o.current.overClass);
  };
  const end = () => {
    const p = press.current;
    press.current = null;
    if (!p) return;
    if (p.timer) clearTimeout(p.timer);
    if (p.active) dragEnded.current = performance.now();
    setOver(p, null);
    shown(p).classList.remove(o.current.draggingClass);
    if (p.source.hasPointerCapture(p.pointerId)) p.source.releasePointerCapture(p.pointerId);
  };
  const start = (p: Press) => {
    p.timer = null;
    p.active = true;
    try {
      p.source.setPointerCapture(p.pointerId);
    } catch {
      // The pointer went away between the press and the end of the hold.
      end();
      return;
    }
    shown(p).classList.add(o.current.draggingClass);
    if ((o.current.holdMs ?? 0) > 0) navigator.vibrate?.(15);
  };
  const targetAt = (p: Press, x: number, y: number) => {
    const el = document.elementFromPoint(x, y);
    const target = el ? o.current.targetOf(el, p.source) : null;
    return target && target !== p.source ? target : null;
  };
  useEffect(() => end, []);

  return {
    handlers: {
      onPointerDown: (e: PointerEvent) => {
        const types = o.current.pointerTypes;
        if (e.button !== 0 || (types && !types.includes(e.pointerType))) return;
        end();
        const hold = o.current.holdMs ?? 0;
        const p: Press = { pointerId: e.pointerId, source: e.currentTarget as HTMLElement, x: e.clientX, y: e.clientY, timer: null, active: false, over: null };
        press.current = p;
        if (hold > 0) p.timer = setTimeout(() => press.current === p && start(p), hold);
        else {
          e.preventDefault(); // no text selection, no focus change
          start(p);
        }
      },
      onPointerMove: (e: PointerEvent) => {
        const p = press.current;
        if (!p || p.pointerId !== e.pointerId) return;
        if (!p.active) {
          if (Math.hypot(e.clientX - p.x, e.clientY - p.y) > SLOP) end(); // a swipe: the page scrolls
          return;
        }
        setOver(p, targetAt(p, e.clientX, e.clientY));
      },
      onPointerUp: (e: PointerEvent) => {
        const p = press.current;
        if (!p || p.pointerId !== e.pointerId) return;
        const target = p.active ? targetAt(p, e.clientX, e.clientY) : null;
        end();
        if (target) o.current.onDrop(p.source, target);
      },
      onPointerCancel: (e: PointerEvent) => {
        if (press.current?.pointerId === e.pointerId) end();
      },
      onTouchMove: (e: TouchEvent) => {
        if (press.current?.active) e.preventDefault(); // the drag has the finger, not the page's scroll
      },
      onContextMenu: (e: Event) => {
        if (press.current) e.preventDefault(); // Android's long-press menu would open over the drag
      },
    },
    /** True (once) for the click that ends a drag: it must not also open the item. */
    consumeClick: () => {
      const was = performance.now() - dragEnded.current < CLICK_AFTER_DRAG_MS;
      dragEnded.current = -Infinity;
      return was;
    },
  };
}
