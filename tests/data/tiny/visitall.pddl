; Tiny valid visitall problem: a 1x3 corridor.
(define (problem visitall-tiny)
  (:domain visit-all)
  (:objects c0 c1 c2 - place)
  (:init (at-robot c0) (visited c0)
         (connected c0 c1) (connected c1 c0) (connected c1 c2) (connected c2 c1))
  (:goal (and (visited c0) (visited c1) (visited c2))))
