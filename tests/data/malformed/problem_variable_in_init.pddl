; A variable where only objects are allowed.
(define (problem ferry-bad)
  (:domain ferry)
  (:objects l0 l1 c0)
  (:init (location l0) (location ?l) (car c0) (at-ferry l0) (empty-ferry) (at c0 l0))
  (:goal (and (at c0 l1))))
