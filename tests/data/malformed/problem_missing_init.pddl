; No (:init ...) section.
(define (problem ferry-bad)
  (:domain ferry)
  (:objects l0 l1 c0)
  (:goal (and (at c0 l1))))
