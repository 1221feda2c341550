; Tiny valid blocksworld problem: put b on a.
(define (problem blocksworld-tiny)
  (:domain blocksworld-4ops)
  (:objects a b)
  (:init (arm-empty) (clear a) (clear b) (on-table a) (on-table b))
  (:goal (and (on b a))))
